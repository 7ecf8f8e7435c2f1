"""Small matplotlib pictures for the notebooks: which elements each program touches, and memory layouts."""
import textwrap

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
    ax.set_title("\n".join(textwrap.wrap(title, 70)), fontsize=9)


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


def show_row_blocks(n=10, block=4, rows=3, padding="-inf"):
    """One program per row, walking its row block by block; lanes past the end are padding."""
    blocks = -(-n // block)
    fig, ax = plt.subplots(figsize=(max(4, 0.5 * blocks * block), 0.7 * rows + 1.2))
    for row in range(rows):
        for i in range(blocks * block):
            _cell(ax, i, row, PALETTE[i // block % len(PALETTE)], masked=i >= n)
        ax.text(-0.3, row + 0.5, f"program {row}", ha="right", va="center", fontsize=8)
    for b in range(blocks):
        ax.text(b * block + block / 2, rows + 0.45, f"step {b}", ha="center", va="center", fontsize=8)
    _finish(ax, f"N={n}, BLOCK_N={block}: each program loops over its row in {blocks} steps; the hatched "
                f"lanes are past the end (masked, loaded as {padding})", blocks * block, rows + 1)
    ax.set_xlim(-3, blocks * block + 0.2)
    return fig


def show_matmul_tiles(m=6, n=7, k=9, block_m=2, block_n=4, block_k=4, program=(1, 1)):
    """The tile of C one program computes, and the panels of A and B it walks along K."""
    pm, pn = program
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), gridspec_kw={"width_ratios": [k + 1, n + 1, n + 1]})
    steps = -(-k // block_k)
    for i in range(-(-m // block_m) * block_m):
        for j in range(steps * block_k):
            mine = i // block_m == pm
            _cell(axes[0], j, i, PALETTE[j // block_k] if mine else "0.9", masked=i >= m or j >= k)
    for i in range(steps * block_k):
        for j in range(-(-n // block_n) * block_n):
            mine = j // block_n == pn
            _cell(axes[1], j, i, PALETTE[i // block_k] if mine else "0.9", masked=i >= k or j >= n)
    for i in range(-(-m // block_m) * block_m):
        for j in range(-(-n // block_n) * block_n):
            mine = i // block_m == pm and j // block_n == pn
            _cell(axes[2], j, i, PALETTE[3] if mine else "0.9", masked=i >= m or j >= n)
    _finish(axes[0], f"A ({m} x {k}): the rows of tile {pm}, K step by step", steps * block_k,
            -(-m // block_m) * block_m)
    _finish(axes[1], f"B ({k} x {n}): the columns of tile {pn}", -(-n // block_n) * block_n, steps * block_k)
    _finish(axes[2], f"C ({m} x {n}): program {program} writes one tile", -(-n // block_n) * block_n,
            -(-m // block_m) * block_m)
    fig.suptitle(f"BLOCK_M={block_m}, BLOCK_N={block_n}, BLOCK_K={block_k}: one colour per step of the K loop; "
                 "hatched lanes are masked (loaded as 0)", fontsize=9)
    fig.tight_layout()
    return fig


def show_attention_tiles(n=10, block_m=4, block_n=4, causal=False):
    """The N x N score matrix in tiles: which key tiles each query block visits, and what is masked."""
    tiles_m, tiles_n = -(-n // block_m), -(-n // block_n)
    fig, ax = plt.subplots(figsize=(max(4, 0.45 * tiles_n * block_n), max(3, 0.45 * tiles_m * block_m)))
    for i in range(tiles_m * block_m):
        for j in range(tiles_n * block_n):
            qb, kb = i // block_m, j // block_n
            skipped = causal and kb * block_n > (qb + 1) * block_m - 1
            masked = i >= n or j >= n or (causal and j > i)
            color = "white" if skipped else PALETTE[qb % len(PALETTE)]
            _cell(ax, j, i, color, masked=masked and not skipped)
    for qb in range(tiles_m):
        ax.text(-0.3, qb * block_m + block_m / 2, f"program {qb}", ha="right", va="center", fontsize=8)
    what = ("query i sees keys j <= i: hatched scores are -inf, white tiles are never loaded" if causal
            else "hatched scores are keys or queries past the end: -inf (keys) or not stored (queries)")
    _finish(ax, f"scores, N={n}, BLOCK_M={block_m}, BLOCK_N={block_n}: each program walks its row of tiles; "
                f"{what}", tiles_n * block_n, tiles_m * block_m)
    ax.set_xlim(-3, tiles_n * block_n + 0.2)
    return fig
