"""Hand-built Gomoku positions for the engine tests, as move lists (Black first)."""

from __future__ import annotations

from dataclasses import dataclass

from tests.data import shared_data_dir

SHARED = shared_data_dir() / "gomoku"


def xy(x: int, y: int, size: int = 15) -> int:
    return y * size + x


def interleave(black: list[int], white: list[int]) -> list[int]:
    """A move list placing these stones (Black first); the lists differ by at most one."""
    assert len(black) - len(white) in (0, 1), (len(black), len(white))
    moves: list[int] = []
    for i, stone in enumerate(black):
        moves.append(stone)
        if i < len(white):
            moves.append(white[i])
    return moves


# Black makes five between two White stones (row 7): after it neither side has a five
# point, not even an overline's, so only the game's end tells the final position apart.
PLAIN_FIVE = interleave([xy(3, 7), xy(4, 7), xy(5, 7), xy(6, 7), xy(7, 7)],
                        [xy(2, 7), xy(8, 7), xy(0, 0), xy(14, 0)])


def staircase_vcf(steps: int) -> list[int]:
    """Black to move with a VCF: a zigzag of broken fours ending in a double four.

    Each segment runs from a corner to the corner four cells on, with Black stones 1
    and 3 cells from its start and a White cap before it. Playing the corners in order
    is a VCF of ``2 * steps + 1`` plies; the zigzag also lines stones up on diagonals,
    so shorter VCFs exist too (the tests only use these as winning positions).
    ``steps`` 1..6.
    """
    black: list[int] = []
    caps: list[int] = []
    x, y = 1, 1
    heading = [(1, 0), (0, 1), (-1, 0), (0, 1)]
    corners = [xy(x, y)]
    for i in range(steps):
        dx, dy = heading[i % 4]
        caps.append(xy(x - dx, y - dy))  # so filling the middle early is no open four
        black += [xy(x + dx, y + dy), xy(x + 3 * dx, y + 3 * dy)]
        x, y = x + 4 * dx, y + 4 * dy
        corners.append(xy(x, y))
    dx, dy = (0, 1) if steps % 2 == 1 else (1, 0)
    black += [xy(x + k * dx, y + k * dy) for k in (1, 2, 3)]
    black.append(corners[0])  # the first corner starts Black
    filler = [xy(fx, fy) for fx in (10, 13) for fy in range(0, 15, 3)]
    filler += [xy(fx, 14) for fx in range(0, 9, 3)] + [xy(7, fy) for fy in range(0, 15, 3)]
    white = caps + [f for f in filler if f not in black][: len(black) - len(caps)]
    assert len(white) == len(black) and not set(white) & set(black)
    return interleave(black, white)


# Black to move; the shortest VCF is 15 plies (13 for the second). Found by searching
# random middlegames with the solver, checked in the tests by the rules library.
VCF_15 = [130, 172, 67, 155, 142, 68, 110, 101, 153, 70, 86, 125, 112, 55, 123, 128, 108, 168,
          63, 78, 171, 145, 51, 174]
VCF_13 = [153, 156, 131, 69, 128, 139, 65, 173, 176, 138, 141, 84, 82, 146, 49, 53, 86, 144,
          124, 169, 85, 108, 140, 114, 110, 158, 98, 67]


@dataclass(frozen=True)
class Tactic:
    """A position where the side to move has a forced win of ``plies`` plies."""

    name: str
    moves: list[int]
    plies: int
    rule: str = "freestyle"
    kind: str = "vcf"  # "vcf": fours only; "vct": fours and threes


TACTICS = [
    Tactic("vcf-13", VCF_13, 13),
    Tactic("vcf-15", VCF_15, 15),
    Tactic("vct-9", VCF_15, 9, kind="vct"),  # the VCF-15 position has a shorter VCT
]


@dataclass(frozen=True)
class Trap:
    """A position from a game Arena lost to Rapfi 0.43 (1 s a move, over gomoku-wide15),
    where Arena played ``lost``, after which the opponent has a VCT. The search at
    ``depth`` (16 moves a node) finds every move lost; ``holds`` are the moves after
    which Arena's threat search finds no opponent VCT of 25 plies in 500,000 nodes."""

    name: str
    moves: list[int]
    depth: int
    lost: int
    holds: frozenset[int]


TRAPS = [
    Trap("rapfi-game-7", [80, 66, 52, 97, 79, 50, 65, 82, 98, 78, 112, 111, 126, 84, 83, 64, 92,
                          51, 81, 63, 36, 48, 33, 49, 47, 77],
         9, 35, frozenset({91, 140})),
    Trap("rapfi-game-8", [80, 66, 52, 97, 79, 50, 96, 82, 98, 64, 78, 77, 112, 63, 65, 84, 93, 107,
                          110],
         9, 62, frozenset({18, 34})),
    Trap("rapfi-game-12", [83, 97, 65, 94, 122, 64, 79, 93, 95, 78, 110, 80, 48, 92, 106, 112, 82,
                           124, 108, 109, 154, 138, 51, 77, 61, 91, 90, 84, 98, 127, 128, 113, 99,
                           115, 114, 66, 37, 23, 38, 141, 125, 142, 157, 155, 169, 139, 140, 36,
                           50],
         6, 123, frozenset({107})),
]

# Positions of games against Rapfi where the opponent, were it to move, has a VCT and no
# VCF, which the root's threat search takes 6,777 and 6,087 nodes to find; with the depth
# at which version 11 (each candidate checked within 2,500 nodes) played a move after
# which that VCT (9 plies) stands: 99 and 123. Versions 14 and 15 play 70, 70 and 62
# there, after which the opponent has a VCT of 15 plies that version 15 finds beyond the
# root's 20,000 nodes (version 14 found none within 500,000). In the first position
# version 16, ordering the defender's answers by weight, finds it within them after each
# of the 12 candidates the root checks (after 86, the last to fall, in 5,000 to 20,000
# nodes); it then checks the others and plays 160 (160 and 176, the 13th and 14th
# candidates, hold: no VCT of 21 plies within 500,000 nodes). In the second, 82, 97, 122
# and 129 hold but are not among the candidates checked, and 62 (version 16, board
# evaluation) falls to a VCT of 15 plies beyond the root's budget.
SLOW_THREATS = [
    ([54, 85, 115, 144, 102, 128, 87, 101, 69, 112, 96], 4),
    ([54, 85, 115, 144, 102, 128, 87, 101, 69, 112, 96], 6),
    ([48, 80, 51, 49, 67, 35, 81, 95, 65, 63, 21, 66, 79, 37, 94, 109, 113, 125, 77, 110, 140,
      124, 107, 93], 4),
]

# Positions of games against Rapfi (``bench/data/gomoku-games-vs-rapfi.jsonl``) where the
# side to move has a VCT of 15 plies that the threat search finds within the root's
# budget (20,000 nodes) only if it tries the defender's fours first among its answers:
# in 3,851, 4,191 and 6,040 nodes (version 15; version 14 did not find them).
DEFENDER_FOURS_VCTS = [
    [189, 220, 222, 172, 209, 207, 158, 159, 175, 145, 188, 203, 142, 126, 128, 187, 173, 143,
     157, 141, 156, 170, 155, 154, 190, 174, 112, 96, 97, 127, 111, 114, 109, 110, 139, 125,
     123, 107, 82, 138, 122, 205, 206, 168, 191, 192, 67, 52, 95, 81, 94, 202, 186, 144, 129,
     146, 147, 169, 171, 166, 167],
    [83, 97, 65, 94, 122, 64, 79, 93, 95, 78, 110, 80, 48, 92, 106, 112, 82, 66, 52, 124, 51,
     67, 50, 49],
    [189, 220, 222, 172, 209, 207, 175, 145, 188, 161, 158, 129, 177, 173, 190, 187, 174, 206,
     159, 204, 205, 191, 176, 178, 142, 126, 113, 112, 140, 141, 128, 171, 156, 170, 169, 157,
     143, 98, 125, 84, 70, 99, 111, 127, 114, 100, 97, 139, 155, 202, 217, 83, 115],
]

# Positions of the same games where the side to move has a VCT of 15 plies that the
# threat search finds within the root's budget (20,000 nodes) only with the defender's
# answers in each group ordered by the cell's weights for both sides: in 12,675 and
# 18,192 nodes (version 16; version 15 took 28,551 and 33,646).
WEIGHED_ANSWERS_VCTS = [
    [189, 220, 222, 172, 209, 207, 175, 161, 158, 173, 156, 159, 187, 131, 186, 188, 171, 201],
    [171, 139, 108, 126, 125, 94, 142, 95, 109, 93, 92, 96, 97, 110, 170, 138, 124, 140, 141,
     173, 154, 112, 128, 114, 111, 65, 80, 64, 63, 68, 98, 82, 54, 78, 62, 51, 83, 69, 76, 60,
     156, 184, 186, 201, 143, 113, 218],
]

# Positions of games against Rapfi (every fourth of ``bench/data/gomoku-games-vs-rapfi.jsonl``)
# where the opponent has a VCF (an open three) and some of the moves that stop it leave
# it a VCT of 13 or 15 plies that the root finds within its budget: version 16 checked
# the blocks against the VCF only, and at depth 4 played 117 and 104, which fall.
VCF_BLOCKS_THAT_FALL = [
    ([54, 85, 115, 144, 102, 86, 87, 101, 71, 55, 69, 70, 40, 84, 72], 117),
    ([117, 88, 58, 100, 131, 114, 145, 159, 129, 130, 146, 86, 142, 72, 128, 56], 104),
]
