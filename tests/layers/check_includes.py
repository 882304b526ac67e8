#!/usr/bin/python3
"""tests/layers/check_includes.py — the folders of src/ include each other in one direction only.

1. No cycle between folders anywhere under src/: if folder A includes a header of folder B
   (directly or through others), B includes nothing of A. A folder and its own sub-folders
   count as one (emu/ and emu/delay_line/).
2. The runtime's folders keep the layer order below: a folder includes only folders of a lower
   layer, never one of its own layer or above. Drawn in docs/runtime.md.

       api                         the Communicator and the C API
       exec                        runs a schedule's operations on the engine and shared memory
       launch                      the launcher and the rendezvous
       transport    streams        the engine (a rank's streams) / the WAN channels' StreamSet
       shm          check          shared memory within a node / --check data, benchmark buffers
       tcp                         wire format, handshake, connect, frame reading and writing,
                                   byte ranges, piece feed, stall watch, governor

    tests/layers/check_includes.py [REPOSITORY]

Prints each offending include as FILE:LINE: includes HEADER (why) and exits 1; else 0.
"""
import pathlib
import re
import sys

RUNTIME_LAYERS = {
    "tcp": 0,
    "shm": 1,
    "check": 1,
    "transport": 2,
    "streams": 2,
    "launch": 3,
    "exec": 4,
    "api": 5,
}

INCLUDE = re.compile(r'\s*#\s*include\s+"([^"]+)"')


def unit(folder):
    """The folder a cycle is checked for: a sub-folder counts with its top folder."""
    parts = folder.split("/")
    return "/".join(parts[:2]) if parts[0] == "runtime" else parts[0]


def includes(src):
    """(file, line, including folder, included folder, header) for headers of another folder."""
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".h", ".c"):
            continue
        folder = str(path.parent.relative_to(src))
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = INCLUDE.match(line)
            if not match or "/" not in match.group(1):
                continue
            header = match.group(1)
            target = header.rsplit("/", 1)[0]
            if (src / target).is_dir() and target != folder:
                yield path, number, folder, target, header


def reaches(graph, start, goal):
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return False


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    src = root / "src"
    found = list(includes(src))
    graph = {}
    for _, _, folder, target, _ in found:
        a, b = unit(folder), unit(target)
        if a != b:
            graph.setdefault(a, set()).add(b)
    problems = 0
    for path, number, folder, target, header in found:
        a, b = unit(folder), unit(target)
        name = f"{path.relative_to(root)}:{number}: includes {header}"
        if a != b and reaches(graph, b, a):
            print(f"{name} (a cycle: {b} reaches {a} again)")
            problems += 1
        if a.startswith("runtime/") and b.startswith("runtime/") and a != b:
            lower, upper = a.split("/")[1], b.split("/")[1]
            if lower not in RUNTIME_LAYERS or upper not in RUNTIME_LAYERS:
                print(f"{name} (a runtime folder without a layer: add it to RUNTIME_LAYERS)")
                problems += 1
            elif RUNTIME_LAYERS[upper] >= RUNTIME_LAYERS[lower]:
                print(f"{name} ({upper} is not below {lower} in the runtime's layers)")
                problems += 1
    if problems:
        print(f"{problems} include(s) against the layers")
        return 1
    print("the folders' includes follow the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
