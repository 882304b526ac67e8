"""The table of bench/apps-on-grid.sh, from its work folder.

Each run's folder is APP-CASE-SIDE-RUN with `seconds` (wall time), `stderr` (the PMPI library's
MULTILANE_PROFILE line) and the application's output (LAMMPS: log.lammps; HPCC: hpccoutf.txt).
Prints, per case: the median time alone and with the library, their ratio, the share of the
time in collectives on each side, LAMMPS's own "Comm" share, and whether the results agree.
"""
import os
import re
import statistics
import sys

PROFILE = re.compile(r"collectives ([0-9.e+-]+) s of ([0-9.e+-]+) s since MPI_Init \(([0-9.]+)%\)")
COMM = re.compile(r"^Comm\s*\|.*\|\s*([0-9.]+)\s*$")


def runs_of(work):
    """{(app, case): {side: [folder, ...]}}, runs in order."""
    cases = {}
    for name in sorted(os.listdir(work)):
        parts = name.rsplit("-", 2)
        if len(parts) != 3 or parts[1] not in ("alone", "library"):
            continue
        app, case = parts[0].split("-", 1)
        cases.setdefault((app, case), {}).setdefault(parts[1], []).append(os.path.join(work, name))
    return cases


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def share(folder):
    """The collectives' share of the run, in percent, from the profile line."""
    found = PROFILE.search(read(os.path.join(folder, "stderr")))
    return float(found.group(3)) if found else None


def thermo_rows(folder):
    """Every thermodynamic row LAMMPS printed, as lists of strings."""
    rows, inside = [], False
    for line in read(os.path.join(folder, "log.lammps")).splitlines():
        fields = line.split()
        if fields[:1] == ["Step"]:
            inside = True
        elif line.startswith("Loop time"):
            inside = False
        elif inside and fields:
            rows.append(fields)
    return rows


def lammps_comm(folder):
    shares = [float(m.group(1)) for m in map(COMM.match, read(os.path.join(folder, "log.lammps")).splitlines()) if m]
    return statistics.median(shares) if shares else None


def relative_difference(a, b):
    worst = 0.0
    for row_a, row_b in zip(a, b):
        for x, y in zip(row_a, row_b):
            x, y = float(x), float(y)
            scale = max(abs(x), abs(y))
            if scale > 0:
                worst = max(worst, abs(x - y) / scale)
    return worst


def lammps_agreement(case, folders):
    reference = thermo_rows(folders[0])
    if not reference:
        return "no thermo output"
    others = [thermo_rows(f) for f in folders[1:]]
    if any(len(rows) != len(reference) for rows in others):
        return "row counts differ"
    if case == "lj-nve":
        same = all(rows == reference for rows in others)
        return f"identical ({len(reference)} rows)" if same else "DIFFER"
    worst = max((relative_difference(reference, rows) for rows in others), default=0.0)
    verdict = "within 1e-6" if worst <= 1e-6 else "OUTSIDE 1e-6"
    return f"{verdict} (largest {worst:.1e})"


def hpcc_agreement(folders):
    passed = failed = 0
    for folder in folders:
        text = read(os.path.join(folder, "hpccoutf.txt"))
        passed += len(re.findall(r"\bPASSED\b", text))
        failed += len(re.findall(r"\bFAILED\b", text))
    runs = len(folders)
    return f"{passed // runs} PASSED, {failed // runs} FAILED per run" if runs else "no run"


def median_seconds(folders):
    times = [float(read(os.path.join(f, "seconds")) or "nan") for f in folders]
    return statistics.median(times)


def percent(values):
    values = [v for v in values if v is not None]
    return f"{statistics.median(values):.1f}%" if values else "-"


def main(work):
    print("| application | case | alone | library | alone / library | collectives, alone | "
          "collectives, library | LAMMPS Comm | results, both sides |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for (app, case), sides in runs_of(work).items():
        alone, library = sides.get("alone", []), sides.get("library", [])
        if not alone or not library:
            continue
        t_alone, t_library = median_seconds(alone), median_seconds(library)
        comm = "-"
        if app == "lammps":
            values = [lammps_comm(f) for f in alone]
            comm = percent(values)
            agreement = lammps_agreement(case, alone + library)
        else:
            agreement = hpcc_agreement(alone + library)
        print(f"| {app} | {case} | {t_alone:.1f} s | {t_library:.1f} s | "
              f"**{t_alone / t_library:.2f}** | {percent(share(f) for f in alone)} | "
              f"{percent(share(f) for f in library)} | {comm} | {agreement} |")


if __name__ == "__main__":
    main(sys.argv[1])
