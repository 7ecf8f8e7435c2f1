"""Small matplotlib pictures for the notebooks: which elements each program touches, and memory layouts."""
import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

PALETTE = plt.get_cmap("tab10").colors


def _cell(ax, x, y, color, text="", masked=False):
    ax.add_patch(Rectangle((x, y), 1, 1, facecolor="white" if masked else color, edgecolor="black",
                           hatch="//" if masked else None, linewidth=0.8))
    if text:
        ax.text(x + 0.5, y + 0.5, text, ha="center", va="center", fontsize=8)


def _finish(ax, title, width, height):
    ax.set_xlim(-0.2, width + 0.2)
    ax.set_ylim(height + 0.2, -0.2)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title, fontsize=10)


def show_blocks(n_elements=10, block_size=4):
    """A vector split into blocks, one per program; lanes past the end are hatched (masked)."""
    programs = -(-n_elements // block_size)
    fig, ax = plt.subplots(figsize=(max(4, 0.5 * programs * block_size), 1.6))
    for i in range(programs * block_size):
        pid = i // block_size
        _cell(ax, i, 0, PALETTE[pid % len(PALETTE)], str(i), masked=i >= n_elements)
    for pid in range(programs):
        ax.text(pid * block_size + block_size / 2, 1.5, f"program {pid}", ha="center", fontsize=8)
    _finish(ax, f"n_elements={n_elements}, BLOCK_SIZE={block_size}: {programs} programs; hatched lanes "
                f"are past the end and must be masked", programs * block_size, 2)
    return fig


def show_tiles(m=5, n=7, block_m=2, block_n=4):
    """An M x N output cut into BLOCK_M x BLOCK_N tiles, one per program (pid_m, pid_n)."""
    tiles_m, tiles_n = -(-m // block_m), -(-n // block_n)
    fig, ax = plt.subplots(figsize=(max(4, 0.55 * tiles_n * block_n), max(2.5, 0.55 * tiles_m * block_m)))
    for i in range(tiles_m * block_m):
        for j in range(tiles_n * block_n):
            tile = (i // block_m) * tiles_n + j // block_n
            _cell(ax, j, i, PALETTE[tile % len(PALETTE)], masked=i >= m or j >= n)
    for pm in range(tiles_m):
        for pn in range(tiles_n):
            ax.text(pn * block_n + block_n / 2, pm * block_m + block_m / 2, f"({pm},{pn})", ha="center",
                    va="center", fontsize=8)
    _finish(ax, f"{m} x {n} output, {block_m} x {block_n} tiles: program (pid_m, pid_n) writes its tile; "
                "hatched lanes are masked", tiles_n * block_n, tiles_m * block_m)
    return fig


def show_split_views(rows=4, widths=(2, 4)):
    """A parent split into column views: where each view's elements sit in the parent's memory."""
    width = sum(widths)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(5, 0.45 * rows * width), 4),
                                      gridspec_kw={"height_ratios": [rows, 1.6]})
    starts = [sum(widths[:k]) for k in range(len(widths))]
    owner = [next(k for k in reversed(range(len(widths))) if j >= starts[k]) for j in range(width)]
    for i in range(rows):
        for j in range(width):
            _cell(top, j, i, PALETTE[owner[j]], f"{i},{j - starts[owner[j]]}")
    views = ", ".join(f"view {k}: {rows}x{w}, stride ({width}, 1)" for k, w in enumerate(widths))
    _finish(top, f"torch.split of a {rows}x{width} tensor: {views}", width, rows)
    for address in range(rows * width):
        _cell(bottom, address, 0, PALETTE[owner[address % width]], str(address))
    _finish(bottom, "the parent's memory, in address order: a view's rows are "
                    f"{width} elements apart, not {widths[0]}", rows * width, 1.6)
    fig.tight_layout()
    return fig
