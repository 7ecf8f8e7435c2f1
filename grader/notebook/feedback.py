"""What a student sees in the notebook: a table of the cases, the diagnostics in words, and pictures.

The pictures come from the memory checker's records (access.memory_map): which program loaded or stored
each element, the elements never written, the wrong ones, and the lanes that went out of bounds.
"""
import base64
import html
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after choosing the non-interactive backend)
from matplotlib.figure import Figure  # noqa: E402 (not pyplot's: the estimate's panel is drawn in a thread of its own)
from matplotlib.patches import Rectangle  # noqa: E402

from ..pipeline.performance import summary  # noqa: E402
from ..pipeline.report import REPLAY_INTRO  # noqa: E402

PALETTE = plt.get_cmap("tab20").colors
CASES_DETAILED = 3


def puzzle_html(result, estimating=False):
    """The report of a checked puzzle; `estimating`: its performance estimate is on its way."""
    status = "PASS" if result.status == "pass" else result.status.upper()
    color = "#1a7f37" if result.status == "pass" else "#b42318"
    parts = [f'<div class="triton-course"><h3 style="color:{color}">{html.escape(result.id)}: '
             f'{html.escape(result.title)} - {status}, {result.points:g}/{result.max_points:g} points</h3>']
    if result.cases:
        rows = "".join(
            f'<tr><td style="color:{"#1a7f37" if c.status == "pass" else "#b42318"}">{c.status}</td>'
            f"<td>{html.escape(c.name)}</td><td>{html.escape(c.description)}</td></tr>" for c in result.cases)
        parts.append(f'<table><tr><th>result</th><th>case</th><th>shape, layout, dtype, blocks</th></tr>{rows}</table>')
    parts += [f"<p><i>{html.escape(note)}</i></p>" for note in result.notes]
    failing = [c for c in result.cases if c.status != "pass"]
    for case in failing[:CASES_DETAILED]:
        parts.append(f"<h4>case '{html.escape(case.name)}'</h4>")
        parts += [f"<pre style='white-space: pre-wrap'>{html.escape(d.kind)}: {html.escape(d.message)}</pre>" for d in case.diagnostics]
        if case.replay and case is failing[0]:
            parts.append(f"<details><summary>Step through it</summary><p>{html.escape(REPLAY_INTRO)}</p>"
                         f"<pre>{html.escape(case.replay)}</pre></details>")
        if case.memory:
            parts += [_around_table(t) for t in case.memory["tensors"] if t.get("around")]
            parts += [_image(f, "which program touched which element") for f in access_figures(case.memory)]
            for tensor in case.memory["tensors"]:
                if len(tensor["shape"]) == 2 and any(any(row) for row in tensor.get("wrong", [])):
                    parts.append(_image(wrong_heatmap(tensor), f"where {tensor['name']} is wrong"))
    if len(failing) > CASES_DETAILED:
        parts.append(f"<p>{len(failing) - CASES_DETAILED} more failing cases: "
                     f"{html.escape(', '.join(c.name for c in failing[CASES_DETAILED:]))}</p>")
    parts += [f"<pre style='white-space: pre-wrap'>{html.escape(d.kind)}: {html.escape(d.message)}</pre>" for d in result.diagnostics
              if d.case is None]
    if result.performance:
        parts.append(performance_html(result.performance))
    elif estimating:
        parts.append("<p><i>How fast would it be? Estimating it on the CPU...</i></p>")
    for case in result.cases:
        if case.status == "pass" and case.memory:
            parts.append(f"<h4>case '{html.escape(case.name)}'</h4>")
            parts += [_image(f, "which program touched which element") for f in access_figures(case.memory)]
            break
    return "\n".join(parts) + "</div>"


def performance_html(performance):
    """The check's performance panel: the estimate in a line, a picture of the four ceilings against the
    roofline, and what would make the largest difference."""
    lines = summary(performance)
    parts = [f"<details open><summary><b>How fast would it be?</b> {html.escape(lines[0])}</summary>"]
    if not performance["error"]:
        parts.append(_image(ceilings_figure(performance), "the estimate's ceilings against the roofline"))
        parts += [f"<p>{html.escape(line.lstrip(' -'))}</p>" for line in lines[1:]]
        parts.append("<p><i>Estimated on the CPU from the interpreter's record of the kernel at the GPU stage's "
                     "size; <code>triton-course bench</code> measures it on a GPU.</i></p>")
    return "".join(parts) + "</details>"


def ceilings_figure(performance):
    """Horizontal bars: the time each ceiling allows, the least time any kernel needs as a dashed line."""
    names = {"memory": "DRAM bytes", "requests": "L2 requests", "latency": "latency, programs", "compute": "arithmetic"}
    ceilings = performance["ceilings"]
    figure = Figure(figsize=(5.5, 1.6))
    axes = figure.subplots()
    keys = list(names)
    values = [ceilings.get(k, 0) * 1e6 for k in keys]
    colors = ["#b42318" if k == performance["bound"] else "#8c8c8c" for k in keys]
    axes.barh([names[k] for k in keys], values, color=colors)
    axes.axvline(performance["roofline_s"] * 1e6, color="#1a7f37", linestyle="--", label="roofline")
    axes.invert_yaxis()
    axes.set_xlabel(f"microseconds on an {performance['gpu']}")
    axes.legend(loc="lower right", fontsize=8)
    return figure


def _around_table(tensor):
    """Expected against got around the first wrong element (wrong cells in red)."""
    around = tensor["around"]
    row0, column0 = around["origin"]
    one_dimensional = len(tensor["shape"]) == 1
    header = "".join(f"<th>{column0 + c}</th>" for c in range(len(around["got"][0])))
    rows = []
    for r, (got, expected, wrong) in enumerate(zip(around["got"], around["expected"], around["wrong"])):
        cells = "".join(
            f'<td style="color:{"#b42318" if w else "#1a7f37"}">{g:.4g}<br><small>{e:.4g}</small></td>'
            for g, e, w in zip(got, expected, wrong))
        label = "" if one_dimensional else f"<th>{row0 + r}</th>"
        rows.append(f"<tr>{label}{cells}</tr>")
    corner = "" if one_dimensional else "<th></th>"
    first = around["first"][1] if one_dimensional else tuple(around["first"])
    return (f"<p>{html.escape(tensor['name'])} around its first wrong element, index {first} "
            "(got above, expected below; red: wrong):</p>"
            f"<table><tr>{corner}{header}</tr>{''.join(rows)}</table>")


def _image(figure, alt):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=72, bbox_inches="tight")
    data = base64.b64encode(buffer.getvalue()).decode()
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


WRAP = 64  # a 1-D tensor is drawn as rows of this many elements, like a memory dump
CELL = 0.14  # inches per element


def _grid(shape):
    if len(shape) == 1:
        columns = min(WRAP, max(shape[0], 16))  # room after a short vector for lanes past its end
        return -(-shape[0] // columns), columns
    return (shape[-2], shape[-1]) if len(shape) == 2 else None


def _cells(values, shape):
    """Values laid out as drawn: rows and columns, row-major, None past the end."""
    rows, columns = _grid(shape)
    flat = [v for row in values for v in row] if len(shape) == 2 else list(values)
    flat += [None] * (rows * columns - len(flat))
    return [flat[r * columns:(r + 1) * columns] for r in range(rows)]


def access_figures(memory):
    """A picture per tensor: each element coloured by the program that stored it (outputs) or loaded it
    (inputs); hatched: never written; red outline: wrong; red crosses after the end: lanes out of bounds."""
    figures = []
    for tensor in memory["tensors"]:
        if _grid(tensor["shape"]) is None:
            continue
        rows, columns = _grid(tensor["shape"])
        numel = rows * columns if len(tensor["shape"]) == 2 else tensor["shape"][0]
        written = "wrong" in tensor
        programs = _cells(tensor["writers" if written else "readers"], tensor["shape"])
        wrong = _cells(tensor["wrong"], tensor["shape"]) if written else None
        unwritten = _cells(tensor["unwritten"], tensor["shape"]) if written else None
        beyond = []
        if "out_of_bounds" in tensor:
            beyond = sorted({int(o) for o in tensor["out_of_bounds"]["offsets"] if o >= numel})[:2 * WRAP]
        extra_rows = -(-(numel % columns + len(beyond)) // columns) - (1 if numel % columns else 0) if beyond else 0
        figure = Figure(figsize=(0.6 + CELL * columns, 0.7 + CELL * (rows + max(extra_rows, 0))))
        axis = figure.subplots()
        for r in range(rows):
            for c in range(columns):
                program = programs[r][c]
                if program is None:
                    continue
                color = "white" if program < 0 else PALETTE[program % len(PALETTE)]
                axis.add_patch(Rectangle((c, r), 1, 1, facecolor=color, edgecolor="0.6", linewidth=0.3,
                                         hatch="////" if unwritten and unwritten[r][c] else None))
                if wrong and wrong[r][c]:
                    axis.add_patch(Rectangle((c + 0.1, r + 0.1), 0.8, 0.8, fill=False, edgecolor="red", linewidth=1))
        for offset in beyond:  # drawn where they would be if the tensor went on
            row, column = divmod(offset, columns) if len(tensor["shape"]) == 1 else (rows, offset - numel)
            axis.plot(column + 0.5, row + 0.5, "x", color="red", markersize=4)
        verb = "stored" if written else "loaded"
        title = f"{tensor['name']} {tuple(tensor['shape'])}: colour = program that {verb} the element"
        if written:
            title += "\nhatched = never written, red square = wrong"
        if beyond:
            oob = tensor["out_of_bounds"]
            program = oob["program"][0] if len(oob["program"]) == 1 else tuple(oob["program"])
            title += f"\nred x = {oob['access']} past the end by program {program}"
        axis.set_title(title, fontsize=7, loc="left")
        axis.set_xlim(0, columns)
        axis.set_ylim(rows + max(extra_rows, 0), 0)
        axis.set_aspect("equal")
        axis.axis("off")
        figures.append(figure)
    return figures


def wrong_heatmap(tensor):
    """A 2-D output's wrong elements (red) and never-written ones (grey)."""
    wrong = tensor["wrong"]
    unwritten = tensor["unwritten"]
    rows, columns = len(wrong), len(wrong[0])
    image = [[2 if unwritten[r][c] else 1 if wrong[r][c] else 0 for c in range(columns)] for r in range(rows)]
    figure = Figure(figsize=(min(9, 1 + columns * 0.15), min(6, 1 + rows * 0.15)))
    axis = figure.subplots()
    axis.imshow(image, cmap=matplotlib.colors.ListedColormap(["#e8f5e9", "#d32f2f", "#9e9e9e"]), vmin=0, vmax=2,
                interpolation="nearest")
    axis.set_title(f"{tensor['name']}: red = wrong, grey = never written, green = right", fontsize=8)
    axis.set_xlabel("column")
    axis.set_ylabel("row")
    return figure
