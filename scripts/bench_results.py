"""Where the benchmark scripts keep what they measured: bench-results/ in the checkout (not
committed). Benchmark-only code."""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # scripts/ -> checkout


def save(name, text, data=None):
    """Writes bench-results/NAME.md (the printed table) and, with data, NAME.json."""
    folder = os.path.join(ROOT, "bench-results")
    os.makedirs(folder, exist_ok=True)
    if data is not None:
        with open(os.path.join(folder, name + ".json"), "w") as handle:
            json.dump(data, handle, indent=2)
    with open(os.path.join(folder, name + ".md"), "w") as handle:
        handle.write(text + "\n")
