"""`triton-course leaderboard`: a static page ranking students by their kernels' speed on the GPU.

One part per GPU model, since a time on one GPU says nothing of another: in each, per puzzle a sortable table
of students with their figures and a chart of each student's fraction of the GPU's measured copy bandwidth or
matmul rate; overall, a ranking by the geometric mean of the speed-ups over PyTorch. A submission rejected or
failed by the GPU stage is listed with its reason and not ranked.
"""
import html
import json
import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after choosing the non-interactive backend)


NUMBER = {"type": "number", "minimum": 0}
TEXT = {"type": "string", "maxLength": 10_000}
# What `triton-course bench` writes. A results file passes through hands (students send theirs, a batch job
# collects them): the page uses nothing that does not match this.
RESULTS = {
    "type": "object",
    "required": ["student", "device", "puzzles"],
    "properties": {
        "student": {"type": "string", "minLength": 1, "maxLength": 200},
        "device": {"oneOf": [{"type": "null"}, {
            "type": "object", "required": ["name", "driver", "cuda", "torch", "triton"],
            "properties": {key: TEXT for key in ("name", "driver", "cuda", "torch", "triton")}}]},
        "puzzles": {"type": "array", "maxItems": 1000, "items": {
            "type": "object", "required": ["id", "title", "status"],
            "properties": {
                "id": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,63}$"},
                "title": TEXT, "reason": TEXT,
                "status": {"enum": ["pass", "fail", "error", "missing", "rejected", "no_benchmark"]},
                "timings": {"type": "array", "items": {
                    "type": "object", "required": ["time_s", "speedup", "fraction"],
                    "properties": {"time_s": {"type": "number", "exclusiveMinimum": 0},
                                   "speedup": {"type": "number", "exclusiveMinimum": 0},
                                   "fraction": NUMBER, "gbps": NUMBER, "tflops": NUMBER}}}},
            "if": {"properties": {"status": {"const": "pass"}}},
            "then": {"required": ["timings"], "properties": {"timings": {"minItems": 1}}}}},
    },
}


class ResultsError(ValueError):
    """A results file the leaderboard cannot use, and why."""


def load_results(paths):
    """The results in the files (each one student's, or a class's list), each checked against RESULTS; raises
    ResultsError naming the file and the field."""
    results = []
    for path in paths:
        try:
            data = json.loads(Path(path).read_text(), parse_constant=_no_constant)
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
            raise ResultsError(f"{path}: {error}") from None
        for number, entry in enumerate(data if isinstance(data, list) else [data]):
            try:
                validate_results(entry)
            except ResultsError as error:
                where = f" (entry {number + 1})" if isinstance(data, list) else ""
                raise ResultsError(f"{path}{where}: {error}") from None
            results.append(entry)
    return results


def validate_results(data):
    """Raise ResultsError unless `data` is one student's results as `triton-course bench` writes them."""
    import jsonschema
    try:
        jsonschema.validate(data, RESULTS)
    except jsonschema.ValidationError as error:
        where = "/".join(str(part) for part in error.absolute_path) or "the top level"
        raise ResultsError(f"not results of `triton-course bench` ({where}: {error.message[:200]})") from None
    except RecursionError:
        raise ResultsError("nested too deeply to be results of `triton-course bench`") from None


def _no_constant(name):
    raise ValueError(f"{name} is not a number a timing can have")


def ranking(results):
    """[(student, geometric mean speed-up, puzzles passed)] best first; students with no passing puzzle last."""
    rows = []
    for result in results:
        speedups = [t["speedup"] for p in result["puzzles"] if p["status"] == "pass" for t in p["timings"]]
        mean = math.exp(sum(math.log(s) for s in speedups) / len(speedups)) if speedups else None
        rows.append((result["student"], mean, sum(p["status"] == "pass" for p in result["puzzles"])))
    return sorted(rows, key=lambda row: (row[1] is None, -(row[1] or 0), row[0]))


def write_leaderboard(results, out):
    """The page, one part per GPU model: students are ranked against others timed on the same model only."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    models = {}
    for result in results:
        models.setdefault(result["device"]["name"] if result["device"] else "no GPU", []).append(result)
    parts = [_gpu_part(model, models[model], out) for model in sorted(models)]
    contents = "".join(f'<li><a href="#{_anchor(model)}">{html.escape(model)}</a> ({len(models[model])} '
                       f'students)</li>' for model in sorted(models))
    page = PAGE.format(contents=contents, parts="\n".join(parts))
    (out / "index.html").write_text(page)
    return out / "index.html"


def _anchor(model):
    """An id and file-name prefix for a GPU model: 'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    return re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-") or "gpu"


def _gpu_part(model, results, out):
    anchor = _anchor(model)
    setups = sorted({f"driver {r['device']['driver']}, CUDA {r['device']['cuda']}, torch {r['device']['torch']}, "
                     f"triton {r['device']['triton']}" for r in results if r["device"]})
    puzzles = list(dict.fromkeys(p["id"] for r in results for p in r["puzzles"] if p["status"] != "no_benchmark"))
    titles = {p["id"]: p["title"] for r in results for p in r["puzzles"]}
    sections = [_overall(results, anchor)] + [_puzzle_section(results, pid, titles[pid], anchor, model, out)
                                              for pid in puzzles]
    return (f'<div class="gpu" id="{anchor}"><h2>{html.escape(model)}</h2><p>Every figure below was measured on '
            f'{html.escape(model)} ({html.escape("; ".join(setups) or "no GPU results")}).</p>'
            f'{"".join(sections)}</div>')


def _overall(results, anchor):
    rows = []
    for rank, (student, mean, passed) in enumerate(ranking(results), start=1):
        value = f"{mean:.2f}x" if mean else "not ranked"
        rows.append(f'<tr><td data-value="{rank}">{rank}</td><td>{html.escape(student)}</td>'
                    f'<td data-value="{mean or 0}">{value}</td><td data-value="{passed}">{passed}</td></tr>')
    return ('<section><h3>Overall: geometric mean of the speed-ups over PyTorch</h3>'
            f'<table class="sortable" id="{anchor}-overall"><thead><tr><th>rank</th><th>student</th><th>speed-up</th>'
            f'<th>puzzles passed</th></tr></thead><tbody>{"".join(rows)}</tbody></table></section>')


def _puzzle_section(results, puzzle_id, title, anchor, model, out):
    rows, chart = [], []
    for result in results:
        entry = next((p for p in result["puzzles"] if p["id"] == puzzle_id), None)
        if entry is None:
            continue
        student = html.escape(result["student"])
        if entry["status"] != "pass":
            rows.append(f'<tr class="{entry["status"]}"><td>{student}</td><td data-value="-1">{entry["status"]}</td>'
                        f'<td colspan="4">{html.escape(entry.get("reason", ""))}</td></tr>')
            continue
        first = entry["timings"][0]
        rate = f'{first["tflops"]:.1f} TFLOP/s' if "tflops" in first else f'{first["gbps"]:.0f} GB/s'
        speedup = math.exp(sum(math.log(t["speedup"]) for t in entry["timings"]) / len(entry["timings"]))
        rows.append(f'<tr class="pass"><td>{student}</td><td data-value="1">pass</td>'
                    f'<td data-value="{first["time_s"]}">{first["time_s"] * 1e3:.3f} ms</td>'
                    f'<td data-value="{first.get("tflops", first.get("gbps", 0))}">{rate}</td>'
                    f'<td data-value="{first["fraction"]}">{100 * first["fraction"]:.0f}%</td>'
                    f'<td data-value="{speedup}">{speedup:.2f}x</td></tr>')
        chart.append((result["student"].replace("$", r"\$"), first["fraction"]))  # no mathtext in a name
    image = ""
    if chart:
        figure, axes = plt.subplots(figsize=(6, 0.4 * len(chart) + 1.2))
        axes.barh([c[0] for c in chart], [100 * c[1] for c in chart], color="tab:blue")
        axes.axvline(100, color="black", linewidth=0.8)
        axes.set_xlabel(f"% of the measured copy bandwidth or matmul rate\n{model.replace('$', '')}, first size")
        axes.invert_yaxis()
        figure.tight_layout()
        figure.savefig(out / f"{anchor}-{puzzle_id}.png", dpi=80)
        plt.close(figure)
        image = f'<img src="{anchor}-{puzzle_id}.png" alt="fraction of the roofline, {html.escape(title)}, on ' \
                f'{html.escape(model)}">'
    return (f'<section><h3>{html.escape(title)}</h3><table class="sortable" id="{anchor}-{puzzle_id}"><thead><tr>'
            '<th>student</th><th>status</th><th>time</th><th>rate</th><th>of roofline</th><th>speed-up</th>'
            f'</tr></thead><tbody>{"".join(rows)}</tbody></table>{image}</section>')


PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Triton puzzles leaderboard</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; margin-bottom: 1em; }}
th, td {{ border: 1px solid #ccc; padding: 4px 10px; text-align: right; }}
th {{ cursor: pointer; background: #eee; }}
tr.rejected td, tr.fail td, tr.error td {{ color: #a00; }}
</style></head>
<body>
<h1>Triton puzzles leaderboard</h1>
<p>Students are ranked per GPU model, never across models: a time on one GPU says nothing of another. Times are
medians of calls on fresh inputs with the L2 cache flushed, each output rechecked; the speed-up is over PyTorch
timed in the same run. Click a column to sort.</p>
<ul>{contents}</ul>
{parts}
<script>
document.querySelectorAll("table.sortable th").forEach((header, column) => {{
  header.addEventListener("click", () => {{
    const body = header.closest("table").tBodies[0];
    const ascending = header.dataset.order !== "asc";
    header.dataset.order = ascending ? "asc" : "desc";
    const key = row => {{
      const cell = row.cells[column];
      if (!cell) return "";
      const value = cell.dataset.value;
      return value === undefined ? cell.textContent : parseFloat(value);
    }};
    [...body.rows].sort((a, b) => {{
      const x = key(a), y = key(b);
      const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return ascending ? order : -order;
    }}).forEach(row => body.appendChild(row));
  }});
}});
</script>
</body></html>
"""
