"""bench/lib/bench_text.py — sizes and times as the comparison scripts print them in tables.

Imported by the Python parts of bench/compare-openmpi.sh and bench/emu_compare.sh (which put
bench/lib on PYTHONPATH)."""


def size_text(n):
    """Bytes in the largest binary unit that divides them: 1048576 -> '1 MiB'."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def time_text(s):
    """Seconds with three significant digits in a readable unit: 0.0123 -> '12.3 ms'."""
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s * 1e9:.3g} ns"
