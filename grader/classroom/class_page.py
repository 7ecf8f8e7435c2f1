"""What the class got wrong, on one page: `grade` writes `<out stem>_class.html` next to the CSV.

From the students' reports (the feedback JSON): the score distribution, each puzzle's pass rate, the kinds
of failure that cost most students each puzzle with one message as an example, the cases most students
failed, and the submissions that timed out, crashed, ran out of memory or could not be read. One HTML file,
its figures drawn by matplotlib and embedded, every student-made text escaped.
"""
import base64
import html
import io
from collections import Counter

from ..pipeline.results import KINDS, printable

ENDINGS = ("timeout", "crash", "out_of_memory")
SHOWN = 5  # kinds, cases and examples listed per puzzle
EXAMPLE_CHARS = 700


def write_class_page(path, course, puzzle_ids, reports):
    """Write the page for `reports`: [(student, report JSON data)] in roster order."""
    puzzles = [course.puzzle(pid) for pid in puzzle_ids]
    maximum = sum(p.points for p in puzzles)
    totals = [data["points"] for _, data in reports]
    entries = {p.id: [(student, _entry(data, p.id)) for student, data in reports] for p in puzzles}
    full = sum(1 for total in totals if total == maximum)
    summary = (f"{len(reports)} students; {full} with every point ({maximum:g}); median "
               f"{_median(totals):g} points.")
    sections = [_puzzle_section(p, entries[p.id], len(reports)) for p in puzzles]
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(course.title)}: the class</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 75em; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1.5em; }}
th, td {{ border-bottom: 1px solid #ddd; padding: 0.3em 0.7em; text-align: left; vertical-align: top; }}
td.number {{ text-align: right; }}
pre {{ white-space: pre-wrap; background: #f6f6f6; padding: 0.5em; margin: 0; max-width: 60em; }}
figure {{ display: inline-block; margin: 0 2em 1em 0; }}
</style></head><body>
<h1>{html.escape(course.title)}: what the class got wrong</h1>
<p id="summary">{html.escape(summary)}</p>
{_figure(_score_histogram(totals, maximum), "the distribution of the students' points")}
{_figure(_pass_rates(puzzles, entries, len(reports)), "each puzzle's pass rate")}
{''.join(sections)}
{_unfinished(reports, puzzles)}
</body></html>
"""
    path.write_text(page)
    return path


def _entry(data, puzzle_id):
    return next((p for p in data["puzzles"] if p["id"] == puzzle_id), None)


def _median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2 if ordered else 0


def _puzzle_section(puzzle, entries, students):
    graded = [(student, entry) for student, entry in entries if entry is not None]
    missing = sum(1 for _, entry in entries if entry is None or entry["status"] == "missing")
    passed = sum(1 for _, entry in graded if entry["status"] == "pass")
    kinds, examples, cases = Counter(), {}, Counter()
    for student, entry in graded:
        seen = {}
        for diagnostic in _diagnostics(entry):
            seen.setdefault(diagnostic["kind"], diagnostic)
        for kind, diagnostic in seen.items():
            kinds[kind] += 1
            examples.setdefault(kind, (student, diagnostic))
        for case in entry.get("cases") or ():
            if case["status"] != "pass":
                cases[case["name"]] += 1
    rows = "".join(
        f'<tr><td>{html.escape(kind)}</td><td>{html.escape(KINDS.get(kind, ""))}</td>'
        f'<td class="number">{count}</td><td>{html.escape(printable(examples[kind][0]))}'
        f'{" (case " + html.escape(printable(examples[kind][1]["case"])) + ")" if examples[kind][1].get("case") else ""}'
        f'<pre>{html.escape(printable(examples[kind][1]["message"], keep=chr(10))[:EXAMPLE_CHARS])}</pre></td></tr>'
        for kind, count in kinds.most_common(SHOWN))
    case_rows = "".join(f'<tr><td>{html.escape(printable(name))}</td><td class="number">{count}</td></tr>'
                        for name, count in cases.most_common(SHOWN))
    kinds_table = (f'<table class="kinds"><thead><tr><th>kind</th><th>what it means</th><th>students</th>'
                   f'<th>an example</th></tr></thead><tbody>{rows}</tbody></table>' if rows else
                   "<p>No failures.</p>")
    cases_table = (f'<h3>The cases most students failed</h3><table class="cases"><thead><tr><th>case</th>'
                   f'<th>students</th></tr></thead><tbody>{case_rows}</tbody></table>' if case_rows else "")
    return (f'<section id="puzzle-{html.escape(puzzle.id)}"><h2>{html.escape(puzzle.title)}</h2>'
            f'<p>{passed} of {students} students pass ({_percent(passed, students)}); '
            f'{missing} had no kernel for it.</p>'
            f'<h3>What failed most students</h3>{kinds_table}{cases_table}</section>')


def _diagnostics(entry):
    """A puzzle's diagnostics: its own (a verdict of the whole puzzle) and its failing cases'."""
    found = list(entry.get("diagnostics") or ())
    for case in entry.get("cases") or ():
        found += [{**d, "case": d.get("case") or case["name"]} for d in case.get("diagnostics") or ()]
    return found


def _unfinished(reports, puzzles):
    """The submissions that timed out, crashed, ran out of memory or could not be read."""
    rows = []
    for student, data in reports:
        if data.get("error"):
            rows.append((student, "", "unreadable", data["error"]))
        for puzzle in puzzles:
            entry = _entry(data, puzzle.id)
            for diagnostic in (entry or {}).get("diagnostics") or ():
                if diagnostic["kind"] in ENDINGS + ("load_error",):
                    rows.append((student, puzzle.title, diagnostic["kind"], diagnostic["message"]))
    body = "".join(f'<tr><td>{html.escape(printable(student))}</td><td>{html.escape(title)}</td>'
                   f'<td>{html.escape(kind)}</td><td><pre>{html.escape(printable(message, keep=chr(10))[:EXAMPLE_CHARS])}'
                   f'</pre></td></tr>' for student, title, kind, message in rows)
    table = (f'<table><thead><tr><th>student</th><th>puzzle</th><th>what</th><th>message</th></tr></thead>'
             f'<tbody>{body}</tbody></table>' if rows else "<p>None.</p>")
    return (f'<section id="unfinished"><h2>Submissions that timed out, crashed, ran out of memory or could not be '
            f'read</h2>{table}</section>')


def _percent(part, whole):
    return f"{100 * part / whole:.0f}%" if whole else "-"


def _score_histogram(totals, maximum):
    figure, axes = _axes()
    bins = min(20, max(1, int(maximum))) if maximum else 1
    axes.hist(totals, bins=bins, range=(0, maximum or 1), color="#4c72b0", edgecolor="white")
    axes.set_xlabel("points")
    axes.set_ylabel("students")
    axes.set_title("Points of the class")
    return figure


def _pass_rates(puzzles, entries, students):
    figure, axes = _axes(height=0.4 * len(puzzles) + 1.2)
    rates = [100 * sum(1 for _, e in entries[p.id] if e and e["status"] == "pass") / max(1, students) for p in puzzles]
    labels = [p.title.replace("$", r"\$") for p in puzzles]
    axes.barh(range(len(puzzles)), rates, color="#55a868")
    axes.set_yticks(range(len(puzzles)), labels)
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    axes.set_xlabel("students who pass (%)")
    axes.set_title("Pass rate per puzzle")
    return figure


def _axes(height=3.2):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(figsize=(6.4, height), dpi=100)
    return figure, axes


def _figure(figure, alt):
    import matplotlib.pyplot as plt
    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    plt.close(figure)
    data = base64.b64encode(buffer.getvalue()).decode()
    return f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(alt)}"></figure>'
