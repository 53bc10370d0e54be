# SPDX-License-Identifier: Apache-2.0
"""pycocotools' compressed RLE strings (common/maskApi.c: rleToString,
rleFrString), re-stated in Python: pycocotools is not packaged for Debian, and
the generator's output_mode="coco_rle" needs it (sam2/utils/amg.py:
coco_encode_rle).  Used by make_amg_testdata.py (checked there against
published vectors) and dump_sam2_amg.py.
"""


def coco_string(counts):
    """pycocotools maskApi.c rleToString, re-stated (counts as uint32, each
    from the 4th on minus the one two places before, 5-bit groups with a
    'more' bit, sign taken from bit 4 of the last group, chars 48 + value)."""
    out = []
    cnts = [int(c) & 0xffffffff for c in counts]
    for i, c in enumerate(cnts):
        x = c - cnts[i - 2] if i > 2 else c
        more = True
        while more:
            ch = x & 0x1f
            x >>= 5  # Python's >> floors, as C's arithmetic shift of a long
            more = (x != -1) if (ch & 0x10) else (x != 0)
            if more:
                ch |= 0x20
            out.append(chr(ch + 48))
    return "".join(out)


def coco_decode(s):
    """pycocotools rleFrString, re-stated (values as Python ints)."""
    counts, p = [], 0
    while p < len(s):
        x, k, more = 0, 0, True
        while more:
            c = ord(s[p]) - 48
            x |= (c & 0x1f) << (5 * k)
            more = bool(c & 0x20)
            p += 1
            k += 1
            if not more and (c & 0x10):
                x |= -1 << (5 * k)
        if len(counts) > 2:
            x += counts[-2]
        counts.append(x)
    return counts
