#!/usr/bin/env bash
# Builds the DocC documentation of NetworkScheduler and its other products (Testing, Timeline,
# Outbox) with the toolchain's own `docc`, without adding a dependency to the package, into
# .build/docs (or the folder given). Fails on any DocC warning.
set -euo pipefail
cd "$(dirname "$0")/.."
output="${1:-.build/docs}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# It also tries the test modules, and fails on them until they are built (`swift build
# --build-tests`); the libraries' graphs, all this needs, are written whatever it says of those.
swift package dump-symbol-graph --skip-synthesized-members --emit-extension-block-symbols >"$log" 2>&1 || true
graphs=$(sed -n 's/^Files written to //p' "$log")
# The vocabulary declared in NetworkSchedulerMachine (RequestPriority, Lane…) is NetworkScheduler's
# API, re-exported: its graph is made again with those symbols in it, which the package command
# cannot ask for.
if [ -n "$graphs" ]; then
    swift-symbolgraph-extract -module-name NetworkScheduler -target "$(basename "$(dirname "$graphs")")" \
        -I .build/debug/Modules $( [ "$(uname)" = Darwin ] && echo -sdk "$(xcrun --show-sdk-path)" ) \
        -minimum-access-level public -skip-synthesized-members -emit-extension-block-symbols \
        -experimental-allowed-reexported-modules=NetworkSchedulerMachine -output-dir "$graphs" >>"$log" 2>&1
fi
for module in NetworkScheduler NetworkSchedulerTesting NetworkSchedulerTimeline NetworkSchedulerOutbox; do
    if [ -z "$graphs" ] || [ ! -f "$graphs/$module.symbols.json" ]; then
        echo "build-docs: no symbol graph for $module; swift package dump-symbol-graph said:" >&2
        cat "$log" >&2
        exit 1
    fi
done
mkdir -p "$output"
for module in NetworkScheduler NetworkSchedulerTesting NetworkSchedulerTimeline NetworkSchedulerOutbox; do
    module_graphs=.build/symbol-graphs/$module
    rm -rf "$module_graphs"
    mkdir -p "$module_graphs"
    cp "$graphs/$module".symbols.json "$module_graphs/"
    cp "$graphs/$module"@*.symbols.json "$module_graphs/" 2>/dev/null || true
    docc convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$module_graphs" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.networkscheduler.$module" \
        --output-path "$output/$module.doccarchive" --warnings-as-errors
done
# DocC warns neither about a public symbol without documentation nor about a function whose
# parameters are all undocumented: this does.
python3 - "$graphs" <<'PYTHON'
import glob, json, sys
missing = []
for module in ("NetworkScheduler", "NetworkSchedulerTesting", "NetworkSchedulerTimeline", "NetworkSchedulerOutbox"):
    for path in glob.glob(f"{sys.argv[1]}/{module}.symbols.json") + glob.glob(f"{sys.argv[1]}/{module}@*.symbols.json"):
        for symbol in json.load(open(path))["symbols"]:
            if symbol.get("accessLevel") not in ("public", "open") or symbol["kind"]["identifier"] == "swift.extension":
                continue
            name = ".".join(symbol["pathComponents"])
            lines = symbol.get("docComment", {}).get("lines")
            if not lines:
                missing.append(name)
                continue
            # Every parameter of a function, by its name inside the function (operators excepted).
            doc = "\n".join(line["text"] for line in lines)
            parameters = symbol.get("functionSignature", {}).get("parameters", [])
            if symbol["kind"]["identifier"] != "swift.func.op":
                for parameter in parameters:
                    inner = parameter.get("internalName", parameter["name"])
                    if f"- {inner}:" not in doc and f"- Parameter {inner}:" not in doc:
                        missing.append(f"{name}: parameter {inner}")
if missing:
    sys.exit("Public symbols or parameters without documentation:\n  " + "\n  ".join(sorted(set(missing))))
PYTHON
echo "Documentation in $output: a .doccarchive per module"
