"""Hot-loop measures over SASS, from nvdisasm's control-flow graph.

Input: the output of `nvdisasm -bbcfg -poff CUBIN` (a DOT graph per function
whose nodes are basic blocks with instruction offsets, and whose edges are
nvdisasm's own branch/fall-through edges), plus a kernel's `.meta`
description (bench/kernels/NAME.meta, TOML).

What it computes, per kernel:
  * the natural loops of the CFG (back edge u -> h where h dominates u);
  * which loops are *hot*: those whose iteration count grows with the
    problem size. That is decided by executing the kernel's SASS for one
    thread at two problem sizes (`Interpreter`: integer and predicate
    arithmetic exactly, floating point and loaded values as unknown) and
    comparing how often each loop header runs;
  * the *hot loops*: the innermost hot loops (no hot loop nested inside).
    For each: its SASS instructions (NOPs excluded) per iteration, the
    elements it handles per iteration (instructions of the meta's `unit`
    kind, scaled by their width over `element_bytes`), and the global loads
    in flight (loads issued in one iteration before the first use of any of
    them);
  * `per group` (a .meta with `group = { name = "k-tile", elements = 4 }`): the
    same marginal cost per group of elements, split into the unit instructions
    (a GEMM's HGMMAs per k-tile) and every other instruction executed;
  * `executed per element`: the marginal cost, (instructions executed at the
    large size - at the small size) / (elements handled at the large size -
    at the small size), for the followed thread. It counts everything the
    extra elements cost (outer-loop overhead, barriers, refills), which is
    what the hot-loop column cannot see when the hot loop runs only a few
    iterations per outer iteration (pipeline_sum). For a kernel without a
    hot loop (saxpy: one element per thread) it is the whole thread's count.

No GPU and no CUDA library is used: only the text nvdisasm prints.
"""
import re
import struct
from dataclasses import dataclass, field

MASK = 0xFFFFFFFF
NOP = "NOP"

# Opcodes that write no general register (every register operand is a source).
NO_REG_DEST = {
    "ST", "STS", "STG", "STL", "RED", "REDG", "BAR", "BRA", "EXIT", "RET", "CALL", "BSSY",
    "BSYNC", "WARPSYNC", "NOP", "MEMBAR", "ERRBAR", "CGAERRBAR", "CCTL", "FENCE", "YIELD",
    "UCGABAR_ARV", "UCGABAR_WAIT", "UBLKCP", "ISETP", "FSETP", "PLOP3", "UISETP", "FCHK",
    "VOTEU", "ELECT", "ENDCOLLECTIVE", "DEPBAR", "BPT", "KILL",
}
GLOBAL_LOADS = {"LDG"}
SHARED_LOADS = {"LDS"}


@dataclass
class Instr:
    off: int
    text: str            # as printed, without the trailing ';'
    pred: str = None     # '@P0', '@!UP1', ... or None
    opcode: str = ""     # with modifiers: 'LDG.E.CONSTANT'
    base: str = ""       # without: 'LDG'
    ops: list = field(default_factory=list)

    @property
    def mods(self):
        return self.opcode.split(".")[1:]


@dataclass
class Block:
    name: str
    instrs: list
    succs: list = field(default_factory=list)


@dataclass
class Function:
    name: str
    blocks: dict         # name -> Block, in the order nvdisasm prints them
    entry: str


@dataclass
class Loop:
    header: str
    blocks: set
    function: str

    def instrs(self, fn):
        out = [i for b in self.blocks for i in fn.blocks[b].instrs]
        return sorted(out, key=lambda i: i.off)


# --------------------------------------------------------------------------- parsing

def parse_instr(off, text):
    text = text.strip().rstrip(";").strip()
    pred = None
    m = re.match(r"(@!?U?P(?:\d+|T))\s+(.*)", text)
    body = text
    if m:
        pred, body = m.group(1), m.group(2)
    parts = body.split(None, 1)
    opcode = parts[0] if parts else ""
    rest = parts[1] if len(parts) > 1 else ""
    ops = [o.strip() for o in split_operands(rest)] if rest else []
    return Instr(off, text, pred, opcode, opcode.split(".")[0], ops)


def split_operands(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[(`":
            depth += 1
        elif ch in "])":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


def unescape_label(s):
    return re.sub(r"\\(.)", r"\1", s)


def parse_bbcfg(text):
    """Functions of an `nvdisasm -bbcfg -poff` listing."""
    funcs = []
    cur = None
    node_re = re.compile(r'^"([^"]+)"\s*$')
    label_re = re.compile(r'^\[label="\{(.*)\}"\]\s*$')
    edge_re = re.compile(r'^"([^"]+)":[\w]+:[a-z]+\s*->\s*"([^"]+)":')
    pending = None
    for line in text.splitlines():
        m = re.match(r'^subgraph "cluster_(.+)" \{', line)
        if m:
            cur = Function(m.group(1), {}, None)
            funcs.append(cur)
            continue
        if cur is None:
            continue
        m = node_re.match(line)
        if m:
            pending = m.group(1)
            continue
        m = label_re.match(line)
        if m and pending is not None:
            instrs = []
            for piece in m.group(1).split("\\l"):
                piece = unescape_label(piece.replace("\\ ", " "))
                piece = re.sub(r"^\|?<\w+>", "", piece)
                im = re.match(r"^\s*([0-9a-f]{4,}):\s+(.*)$", piece)
                if im:
                    instrs.append(parse_instr(int(im.group(1), 16), im.group(2)))
            cur.blocks[pending] = Block(pending, instrs)
            if cur.entry is None:
                cur.entry = pending
            pending = None
            continue
        m = edge_re.match(line)
        if m and m.group(1) in cur.blocks:
            cur.blocks[m.group(1)].succs.append(m.group(2))
    for f in funcs:
        for b in f.blocks.values():
            b.succs = [s for s in dict.fromkeys(b.succs) if s in f.blocks]
    return funcs


# --------------------------------------------------------------------------- loops

def reachable(fn):
    seen, stack = set(), [fn.entry]
    while stack:
        b = stack.pop()
        if b in seen:
            continue
        seen.add(b)
        stack.extend(fn.blocks[b].succs)
    return seen


def dominators(fn):
    nodes = [b for b in fn.blocks if b in reachable(fn)]
    preds = {b: [] for b in nodes}
    for b in nodes:
        for s in fn.blocks[b].succs:
            if s in preds:
                preds[s].append(b)
    dom = {b: set(nodes) for b in nodes}
    dom[fn.entry] = {fn.entry}
    changed = True
    while changed:
        changed = False
        for b in nodes:
            if b == fn.entry:
                continue
            ps = [dom[p] for p in preds[b]]
            new = set.intersection(*ps) | {b} if ps else {b}
            if new != dom[b]:
                dom[b], changed = new, True
    return dom, preds


def natural_loops(fn):
    """Natural loops, one per header (back edges to one header merged)."""
    dom, preds = dominators(fn)
    loops = {}
    for b in dom:
        for h in fn.blocks[b].succs:
            if h in dom and h in dom[b]:           # b -> h is a back edge
                body, stack = {h, b}, [b]
                while stack:
                    x = stack.pop()
                    if x == h:
                        continue
                    for p in preds[x]:
                        if p not in body:
                            body.add(p)
                            stack.append(p)
                loops.setdefault(h, set()).update(body)
    return [Loop(h, body, fn.name) for h, body in loops.items()]


def innermost(loops):
    """The loops of `loops` that contain no other loop of `loops`."""
    return [l for l in loops
            if not any(o is not l and o.function == l.function and o.blocks < l.blocks for o in loops)]


# --------------------------------------------------------------------------- registers

def reg_width(ins, which):
    """How many 32-bit registers a load's destination or a .WIDE result spans."""
    for m in ins.mods:
        if m in ("64",):
            return 2
        if m in ("128",):
            return 4
    return 1


def regs_in(operand):
    """General registers an operand names (R2.64 -> R2, R3)."""
    out = []
    for m in re.finditer(r"(?<![A-Z_])R(\d+)(\.64)?", operand):
        n = int(m.group(1))
        out.append(n)
        if m.group(2):
            out.append(n + 1)
    return out


def dest_and_sources(ins):
    """(registers written, registers read) by an instruction."""
    ops = list(ins.ops)
    writes, reads = [], []
    i = 0
    while i < len(ops) and re.fullmatch(r"U?P(\d+|T)", ops[i]):
        i += 1
    if ins.base not in NO_REG_DEST and ins.opcode.split(".")[0] != "SYNCS" and i < len(ops):
        m = re.fullmatch(r"R(\d+)(\.reuse)?", ops[i])
        if m:
            n = int(m.group(1))
            width = reg_width(ins, "dest")
            if ins.base in ("IMAD", "UIMAD") and "WIDE" in ins.mods:
                width = 2
            writes = list(range(n, n + width))
            i += 1
    for j, o in enumerate(ops):
        if j < i:
            continue
        rs = regs_in(o)
        if ins.base == "IMAD" and "WIDE" in ins.mods and j == len(ops) - 1 and rs:
            rs = [rs[0], rs[0] + 1]
        reads.extend(rs)
    if ins.pred is None and ins.base in NO_REG_DEST:
        pass
    return writes, reads


def access_bytes(ins):
    """Bytes one load or store moves, from its width modifier (.U8 ... .128)."""
    widths = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "32": 4, "64": 8, "128": 16}
    for m in ins.mods:
        if m in widths:
            return widths[m]
    return 4


def unit_elements(ins, unit, element_bytes):
    """Elements one instruction of the unit kind handles (0 for other instructions):
    a memory access counts its width over the element size, anything else 1."""
    if ins.base not in unit:
        return 0
    if ins.base in GLOBAL_LOADS | SHARED_LOADS | {"LD", "STG", "STS", "ST"}:
        return max(1, access_bytes(ins) // element_bytes)
    return 1


def loads_in_flight(instrs, kinds=GLOBAL_LOADS):
    """Loads of `kinds` issued (in the order given: the layout, or an executed
    path) before the first instruction that reads or overwrites the destination
    of any of them."""
    pending, n = set(), 0
    for ins in instrs:
        w, r = dest_and_sources(ins)
        if pending & (set(r) | set(w)):
            break
        if ins.base in kinds:
            n += 1
            pending.update(w)
    return n


# --------------------------------------------------------------------------- interpreter

def split_carry(ops):
    """(destination, carry-out predicates, sources, carry-in predicates) of an
    IADD3/LEA/IMAD: `IADD3 R2, P0, R4, R6, RZ`, `IADD3.X R3, R5, R7, RZ, P0, !PT`."""
    k = 1
    outs = []
    while k < len(ops) and re.fullmatch(r"U?P(\d+|T)", ops[k]):
        outs.append(ops[k])
        k += 1
    rest = ops[k:]
    j = len(rest)
    while j > 0 and re.fullmatch(r"!?U?P(\d+|T)", rest[j - 1]):
        j -= 1
    return ops[0], outs, rest[:j], rest[j:]


class Unknown(Exception):
    pass


def u32(x):
    return x & MASK


def s32(x):
    x &= MASK
    return x - (1 << 32) if x & 0x80000000 else x


ONE = 0x3F800000


def f32(x):
    """Round a Python float to float32 and return its bits."""
    try:
        return struct.unpack("<I", struct.pack("<f", x))[0]
    except OverflowError:
        return 0x7F800000 if x > 0 else 0xFF800000


def bits_to_f(b):
    return struct.unpack("<f", struct.pack("<I", b & MASK))[0]


def f_normal(x):
    import math
    return math.isfinite(x) and (x == 0.0 or abs(x) >= 1.1754943508222875e-38)


SPECIAL = ("SR_TID.X", "SR_TID.Y", "SR_TID.Z", "SR_CTAID.X", "SR_CTAID.Y", "SR_CTAID.Z",
           "SR_LANEID", "SR_CgaCtaId", "SR_SWINHI", "SRZ")


class Interpreter:
    """Runs one thread's SASS with concrete 32-bit values and predicates.

    Integer arithmetic is exact; single-precision arithmetic (FADD, FMUL,
    FFMA, FMNMX, FSETP, MUFU) is evaluated in float32 with round-to-nearest
    (rounding-mode variants are treated alike: they only pick a slow path's
    last bit). Every load (LDG, LDS, LD) returns 1.0f and a shuffle returns
    the thread's own value: typical, normal data, so that the floating-point
    tests guarding slow paths (a division's FCHK, a reciprocal's exponent
    test) take their fast path. A value the interpreter cannot know is None;
    a branch on an unknown predicate takes its fall-through and is counted in
    `guesses`. An mbarrier try-wait succeeds at once; ELECT elects this
    thread; BRA.DIV (divergence check) is never taken; a warp vote sees this
    thread's predicate (the followed thread's warp is uniform for the
    branches that use it).
    """

    def __init__(self, funcs, kernel, cbank, special, limit=5_000_000, trace=False):
        self.funcs = {f.name: f for f in funcs}
        self.kernel = kernel
        self.cbank = cbank          # byte offset -> 32-bit value (bank 0)
        self.special = special      # SR name -> value
        self.limit = limit
        self.keep_trace = trace
        self.trace = []             # (offset, predicate on) when `trace`
        self.code = {}              # offset -> Instr
        self.labels = {}            # block / function name -> first offset
        for f in funcs:
            for b in f.blocks.values():
                for ins in b.instrs:
                    self.code[ins.off] = ins
                if b.instrs:
                    self.labels.setdefault(b.name, b.instrs[0].off)
            first = f.blocks[f.entry].instrs
            if first:
                self.labels[f.name] = first[0].off
        self.order = sorted(self.code)
        self.next = {a: b for a, b in zip(self.order, self.order[1:])}

    # values -----------------------------------------------------------------
    def reg(self, name):
        if name in ("RZ", "URZ"):
            return 0
        return self.r.get(name)

    def setreg(self, name, v):
        if name not in ("RZ", "URZ"):
            self.r[name] = None if v is None else u32(v)

    def pred(self, name):
        neg = name.startswith("!")
        name = name.lstrip("!")
        v = True if name in ("PT", "UPT") else self.p.get(name)
        if v is None:
            return None
        return (not v) if neg else v

    def setpred(self, name, v):
        if name not in ("PT", "UPT"):
            self.p[name] = v

    def val(self, o):
        """Value of a source operand (None when unknown)."""
        o = o.replace(".reuse", "").strip()
        neg = False
        if o.startswith("-") and not re.fullmatch(r"-0x[0-9a-f]+|-\d+", o):
            neg, o = True, o[1:]
        if o.startswith("~"):
            v = self.val(o[1:])
            return None if v is None else u32(~v)
        if o.startswith("|"):
            return None
        m = re.fullmatch(r"(U?R\d+|RZ|URZ)", o)
        if m:
            v = self.reg(o)
        elif re.fullmatch(r"-?0x[0-9a-f]+", o):
            v = int(o, 16)
        elif re.fullmatch(r"-?\d+", o):
            v = int(o)
        elif o.startswith("c[0x0]["):
            off = int(re.match(r"c\[0x0\]\[(0x[0-9a-f]+|RZ)\]", o).group(1).replace("RZ", "0"), 16)
            v = self.cbank.get(off)
        else:
            return None            # float literal, special names
        if v is None:
            return None
        return u32(-v) if neg else u32(v)

    def wide(self, o):
        """A 32-bit source as it enters a carry chain: `-R` is ~R + 1 (33 bits,
        so that a - 0 carries like the hardware), `~R` is ~R."""
        o = o.replace(".reuse", "").strip()
        if o.startswith("-") and not re.fullmatch(r"-0x[0-9a-f]+|-\d+", o):
            v = self.val(o[1:])
            return None if v is None else (~v & MASK) + 1
        return self.val(o)

    def val64(self, o):
        """A 64-bit source: R4 (pair R4, R5) or a constant-bank pair."""
        o = o.replace(".reuse", "")
        m = re.fullmatch(r"(U?)R(\d+)", o)
        if m:
            lo, hi = self.reg(o), self.reg("%sR%d" % (m.group(1), int(m.group(2)) + 1))
        elif o in ("RZ", "URZ"):
            return 0
        elif o.startswith("c[0x0]["):
            off = int(re.match(r"c\[0x0\]\[(0x[0-9a-f]+)\]", o).group(1), 16)
            lo, hi = self.cbank.get(off), self.cbank.get(off + 4)
        else:
            return None
        if lo is None or hi is None:
            return None
        return lo | (hi << 32)

    def set64(self, name, v):
        m = re.fullmatch(r"(U?)R(\d+)", name)
        if not m:
            return
        hi = "%sR%d" % (m.group(1), int(m.group(2)) + 1)
        if v is None:
            self.setreg(name, None)
            self.setreg(hi, None)
        else:
            self.setreg(name, v & MASK)
            self.setreg(hi, (v >> 32) & MASK)

    def fval(self, o):
        """A floating-point source operand as a Python float (None when unknown)."""
        import math
        o = o.replace(".reuse", "").strip()
        neg = o.startswith("-")
        if neg:
            o = o[1:]
        o = o.lstrip("+")
        ab = o.startswith("|") and o.endswith("|")
        if ab:
            o = o[1:-1]
        if re.fullmatch(r"U?R\d+|RZ|URZ", o) or o.startswith("c[0x0]["):
            b = self.val(o)
            if b is None:
                return None
            v = bits_to_f(b)
        elif o == "INF":
            v = math.inf
        elif o in ("QNAN", "NAN"):
            v = math.nan
        else:
            try:
                v = float(o)
            except ValueError:
                return None
        if ab:
            v = abs(v)
        return -v if neg else v

    def fp(self, ins):
        """Evaluates a single-precision instruction; False if it is not one."""
        import math
        b, ops, mods = ins.base, ins.ops, ins.mods
        F = self.fval
        if b in ("FADD", "FMUL"):
            a, c = F(ops[1]), F(ops[2])
            if None in (a, c):
                self.setreg(ops[0], None)
            else:
                self.setreg(ops[0], f32(a + c if b == "FADD" else a * c))
        elif b == "FFMA":
            a, c, d = F(ops[1]), F(ops[2]), F(ops[3])
            self.setreg(ops[0], None if None in (a, c, d) else f32(a * c + d))
        elif b == "FMNMX":
            a, c, p = F(ops[1]), F(ops[2]), self.pred(ops[3])
            if None in (a, c, p):
                self.setreg(ops[0], None)
            else:
                self.setreg(ops[0], f32(min(a, c) if p else max(a, c)))
        elif b == "MUFU":
            a = F(ops[1])
            fn = mods[0] if mods else ""
            try:
                v = {"EX2": lambda x: 2.0 ** x, "RCP": lambda x: 1.0 / x,
                     "RSQ": lambda x: 1.0 / math.sqrt(x)}[fn](a) if a is not None else None
            except (KeyError, ZeroDivisionError, ValueError, OverflowError):
                v = None
            self.setreg(ops[0], None if v is None else f32(v))
        elif b == "FSETP":
            a, c = F(ops[2]), F(ops[3])
            pc = self.pred(ops[4]) if len(ops) > 4 else True
            res = None
            if None not in (a, c):
                cmp = mods[0]
                if math.isnan(a) or math.isnan(c):
                    res = cmp.endswith("U") or cmp in ("NAN",)
                else:
                    res = {"GE": a >= c, "GT": a > c, "LT": a < c, "LE": a <= c, "EQ": a == c,
                           "NE": a != c, "NUM": True, "NAN": False}.get(cmp.rstrip("U"))
            out = None if None in (res, pc) else (res and pc if "AND" in mods else res or pc)
            self.setpred(ops[0], out)
            self.setpred(ops[1], None)
        elif b == "FCHK":
            # true when the division a / b needs the slow path
            a, c = F(ops[1]), F(ops[2])
            if None in (a, c):
                self.setpred(ops[0], None)
            else:
                ok = f_normal(a) and f_normal(c) and c != 0.0 and f_normal(a / c) and a / c != 0.0 or a == 0.0
                self.setpred(ops[0], not ok)
        elif b == "HFMA2" and len(ops) == 5 and ops[1] in ("-RZ", "RZ") and ops[2] == "RZ":
            # -RZ * RZ + (h1, h0): how ptxas materialises a 32-bit constant
            try:
                hi, lo = (struct.unpack("<H", struct.pack("<e", float(x)))[0] for x in ops[3:5])
                self.setreg(ops[0], (hi << 16) | lo)
            except (ValueError, OverflowError, struct.error):
                self.setreg(ops[0], None)
        elif b in ("LDG", "LDS", "LD"):
            w, _ = dest_and_sources(ins)
            for n in w:
                self.setreg("R%d" % n, ONE)
        elif b == "SHFL":
            self.setreg(ops[1], self.val(ops[2]))
            if re.fullmatch(r"U?P\d+", ops[0]):
                self.setpred(ops[0], True)
        else:
            return False
        return True

    @staticmethod
    def lut3(a, b, c, lut, bits=32):
        out = 0
        for k in range(bits):
            idx = (((a >> k) & 1) << 2) | (((b >> k) & 1) << 1) | ((c >> k) & 1)
            out |= ((lut >> idx) & 1) << k
        return out

    # execution --------------------------------------------------------------
    def run(self):
        self.r, self.p = {}, {}
        self.count = {}             # offset -> times issued (predicated off or not)
        self.active = {}            # offset -> times issued with its predicate true (or unknown)
        self.guesses = 0
        pc = self.labels[self.kernel]
        stack = []
        steps = 0
        while True:
            steps += 1
            if steps > self.limit:
                raise Unknown("more than %d instructions: a loop the interpreter cannot end" % self.limit)
            ins = self.code[pc]
            self.count[pc] = self.count.get(pc, 0) + 1
            on = True
            if ins.pred:
                on = self.pred(ins.pred[1:])
            if on is not False:
                self.active[pc] = self.active.get(pc, 0) + 1
            if self.keep_trace:
                self.trace.append((pc, on is not False))
            nxt = self.next.get(pc)
            b = ins.base
            if b == "EXIT":
                if on is None:
                    self.guesses += 1
                    on = False
                if on:
                    return
            elif b == "BRA":
                if "DIV" in ins.mods:
                    on = False
                if on is None:
                    self.guesses += 1
                    on = False
                if on:
                    nxt = self.labels[re.search(r"`\(([^)]+)\)", ins.text).group(1)]
            elif b == "CALL":
                if on:
                    stack.append(nxt)
                    nxt = self.labels[re.search(r"`\(([^)]+)\)", ins.text).group(1)]
            elif b == "RET":
                if on:
                    if not stack:
                        return
                    nxt = stack.pop()
            elif on is None:
                self.unknown_dests(ins)
            elif on:
                self.execute(ins)
            if nxt is None:
                return
            pc = nxt

    def unknown_dests(self, ins):
        w, _ = dest_and_sources(ins)
        for n in w:
            self.setreg("R%d" % n, None)
        for o in ins.ops:
            if re.fullmatch(r"U?P\d+", o) and ins.ops.index(o) == 0:
                self.setpred(o, None)
        m = re.fullmatch(r"UR\d+", ins.ops[0]) if ins.ops else None
        if m:
            self.setreg(ins.ops[0], None)

    def execute(self, ins):
        b, ops, mods = ins.base, ins.ops, ins.mods
        V = self.val
        carried = b.lstrip("U") in ("IADD3", "LEA", "IMAD", "ISETP")
        if ("X" in mods or "EX" in mods) and not carried:
            # a carry-in form of another instruction: not modelled, so not guessed either
            self.unknown_dests(ins)
            if len(ops) > 1 and re.fullmatch(r"U?P\d+", ops[1]):
                self.setpred(ops[1], None)
            return
        U = b.startswith("U") and b not in ("UBLKCP",)
        core = b[1:] if U and b[1:] in ("MOV", "IADD3", "LEA", "SHF", "ISETP", "SEL", "IMAD", "LOP3",
                                          "LDC", "PLOP3", "SGXT", "PRMT", "IMNMX") else b
        if core in ("MOV",):
            self.setreg(ops[0], V(ops[1]))
        elif core == "R2UR":
            self.setreg(ops[0], V(ops[1]))
        elif core in ("S2R", "S2UR", "CS2R"):
            v = self.special.get(ops[1])
            if core == "CS2R" and ops[1] == "SRZ":
                self.set64(ops[0], 0)
            else:
                self.setreg(ops[0], v)
        elif core == "LDC":
            if "64" in mods:
                self.set64(ops[0], self.val64(ops[1]))
            else:
                self.setreg(ops[0], V(ops[1]))
        elif core == "IMAD":
            d, outs, srcs, cins = split_carry(ops)
            cin = [self.pred(o) for o in cins] if "X" in mods else []
            if "WIDE" in mods:
                a, c = V(srcs[0]), V(srcs[1])
                e = self.val64(srcs[2])
                if None in (a, c, e) or None in cin:
                    self.set64(d, None)
                else:
                    if "U32" not in mods:
                        a, c = s32(a), s32(c)
                    self.set64(d, (a * c + e + sum(int(x) for x in cin)) & 0xFFFFFFFFFFFFFFFF)
            else:
                a, c, e = V(srcs[0]), V(srcs[1]), V(srcs[2])
                if None in (a, c, e) or None in cin:
                    self.setreg(d, None)
                else:
                    if "HI" in mods:
                        if "U32" not in mods:
                            a, c = s32(a), s32(c)
                        prod = (a * c) >> 32
                    else:
                        prod = a * c
                    self.setreg(d, prod + e + sum(int(x) for x in cin))
            for o in outs:
                self.setpred(o, None)
        elif core == "IADD3":
            d, outs, srcs, cins = split_carry(ops)
            vals = [self.wide(o) for o in srcs]
            cin = [self.pred(o) for o in cins] if "X" in mods else []
            if None in vals or None in cin:
                self.setreg(d, None)
                for o in outs:
                    self.setpred(o, None)
            else:
                total = sum(vals) + sum(int(c) for c in cin)
                self.setreg(d, total)
                for k, o in enumerate(outs):
                    self.setpred(o, bool((total >> (32 + k)) & 1))
        elif core == "VIADD":
            a, c = V(ops[1]), V(ops[2])
            self.setreg(ops[0], None if None in (a, c) else a + c)
        elif core == "LEA":
            d, outs, srcs, cins = split_carry(ops)
            a, c = V(srcs[0]), V(srcs[1])
            hi = V(srcs[2]) if "HI" in mods and len(srcs) > 3 else 0
            sh = V(srcs[-1])
            cin = [self.pred(o) for o in cins] if "X" in mods else []
            if None in (a, c, hi, sh) or None in cin:
                self.setreg(d, None)
                for o in outs:
                    self.setpred(o, None)
            else:
                sh &= 31
                shifted = (((hi << 32) | a) << sh) >> 32 if "HI" in mods else (a << sh) & MASK
                total = c + shifted + sum(int(x) for x in cin)
                self.setreg(d, total)
                for o in outs:
                    self.setpred(o, bool((total >> 32) & 1))
        elif core == "LOP3":
            i = 0
            pout = None
            if re.fullmatch(r"U?P(\d+|T)", ops[0]):
                pout, i = ops[0], 1
            d = ops[i]
            a, c, e, lut = V(ops[i + 1]), V(ops[i + 2]), V(ops[i + 3]), V(ops[i + 4])
            res = None if None in (a, c, e, lut) else self.lut3(a, c, e, lut)
            self.setreg(d, res)
            if pout:
                self.setpred(pout, None if res is None else res != 0)
        elif core == "SHF":
            lo, s, hi = V(ops[1]), V(ops[2]), V(ops[3])
            if None in (lo, s, hi):
                self.setreg(ops[0], None)
                return
            s = min(s, 32) if "W" not in mods else s & 31
            if "S32" in mods:
                hi_full = s32(hi)
            else:
                hi_full = hi
            v = (hi_full << 32) | lo
            v = (v << s) if "L" in mods else (v >> s)
            self.setreg(ops[0], (v >> 32) if "HI" in mods else v)
        elif core == "ISETP":
            a, c = V(ops[2]), V(ops[3])
            pc = self.pred(ops[4]) if len(ops) > 4 else True
            cmp = mods[0]
            res = None
            if None not in (a, c):
                if "U32" not in mods:
                    a, c = s32(a), s32(c)
                if "EX" in mods:
                    # the high words of a 64-bit compare; the last operand is the low words'
                    low = self.pred(ops[5]) if len(ops) > 5 else None
                    strict = {"GE": a > c, "GT": a > c, "LT": a < c, "LE": a < c,
                              "EQ": False, "NE": a != c}[cmp]
                    if strict:
                        res = True
                    elif low is None:
                        res = None
                    elif cmp == "NE":
                        res = low
                    else:
                        res = a == c and low
                else:
                    res = {"GE": a >= c, "GT": a > c, "LT": a < c, "LE": a <= c,
                           "EQ": a == c, "NE": a != c}[cmp]
            bop = [m for m in mods if m in ("AND", "OR", "XOR")]
            bop = bop[0] if bop else "AND"
            if bop == "AND":
                out = False if (res is False or pc is False) else (None if None in (res, pc) else True)
            elif bop == "OR":
                out = True if (res is True or pc is True) else (None if None in (res, pc) else False)
            else:
                out = None if None in (res, pc) else (res != pc)
            self.setpred(ops[0], out)
            self.setpred(ops[1], None)
        elif core == "PLOP3":
            a, c, e = (self.pred(o) for o in ops[2:5])
            lut = V(ops[5])
            if None in (a, c, e):
                self.setpred(ops[0], None)
            else:
                self.setpred(ops[0], bool(self.lut3(int(a), int(c), int(e), lut, bits=1)))
            self.setpred(ops[1], None)
        elif core == "SEL":
            a, c, p = V(ops[1]), V(ops[2]), self.pred(ops[3])
            self.setreg(ops[0], None if p is None else (a if p else c))
        elif core == "PRMT":
            a, sel, c = V(ops[1]), V(ops[2]), V(ops[3])
            if None in (a, sel, c):
                self.setreg(ops[0], None)
                return
            src = (c << 32) | a
            out = 0
            for k in range(4):
                nib = (sel >> (4 * k)) & 0xF
                byte = (src >> (8 * (nib & 7))) & 0xFF
                out |= byte << (8 * k)
            self.setreg(ops[0], out)
        elif core in ("IMNMX", "VIMNMX"):
            a, c, p = V(ops[1]), V(ops[2]), self.pred(ops[3]) if len(ops) > 3 else True
            if None in (a, c, p):
                self.setreg(ops[0], None)
            else:
                if "U32" not in mods:
                    a, c = s32(a), s32(c)
                self.setreg(ops[0], min(a, c) if p else max(a, c))
        elif core == "IABS":
            a = V(ops[1])
            self.setreg(ops[0], None if a is None else abs(s32(a)))
        elif core == "SGXT":
            a, n = V(ops[1]), V(ops[2])
            n = None if n is None else min(n, 32)
            if None in (a, n):
                self.setreg(ops[0], None)
            elif n == 0:
                self.setreg(ops[0], 0)
            else:
                v = a & ((1 << n) - 1)
                if "U32" not in mods and v >> (n - 1):
                    v -= 1 << n
                self.setreg(ops[0], v)
        elif core == "VOTEU":
            self.setpred(ops[0], self.pred(ops[1]))
        elif core == "ELECT":
            self.setpred(ops[0], True)
        elif b == "SYNCS" and "PHASECHK" in mods:
            self.setpred(ops[0], True)
        elif not self.fp(ins):
            self.unknown_dests(ins)


# --------------------------------------------------------------------------- kernel set-up

def param_size(t):
    """(size, alignment) of a parameter of .meta type `t`: a tensor map is the
    128-byte `.param .align 128 .b8 [128]` (CUtensorMap by value, as nvcc
    declares a `__grid_constant__` one and kdslc writes it)."""
    if t == "tmap":
        return 128, 128
    size = 8 if t in ("ptr", "u64", "s64", "f64") else 4
    return size, size


def param_layout(types, base=0x210):
    """Byte offsets of the kernel parameters in constant bank 0 (sm_90: from 0x210)."""
    off, out = base, []
    for t in types:
        size, align = param_size(t)
        off = (off + align - 1) // align * align
        out.append((off, size))
        off += size
    return out


def constant_bank(meta, size):
    """Bank 0 for one launch: block/grid sizes and the parameters."""
    block, grid = meta["block"], meta.get("grid", [1, 1, 1])
    bank = {0x0: block[0], 0x4: block[1], 0x8: block[2],
            0xC: grid[0], 0x10: grid[1], 0x14: grid[2], 0x28: 0xFFFC00}
    names = [p.split(":")[0].strip() for p in meta["params"]]
    types = [p.split(":")[1].strip() for p in meta["params"]]
    for k, ((off, sz), name, t) in enumerate(zip(param_layout(types), names, types)):
        if t == "tmap":
            # Its 128 bytes are opaque: the copies read them, never the thread.
            continue
        if t == "ptr":
            v = 0x7F0000000000 + (k + 1) * 0x100000000
        else:
            v = size.get(name, 0)
            if t == "f32":
                v = struct.unpack("<I", struct.pack("<f", float(v)))[0]
        bank[off] = v & MASK
        if sz == 8:
            bank[off + 4] = (v >> 32) & MASK
    return bank


def specials(meta):
    t = meta.get("thread", [0, 0, 0])
    c = meta.get("cta", [0, 0, 0])
    bx = meta["block"]
    linear = t[0] + bx[0] * (t[1] + bx[1] * t[2])
    return {"SR_TID.X": t[0], "SR_TID.Y": t[1], "SR_TID.Z": t[2],
            "SR_CTAID.X": c[0], "SR_CTAID.Y": c[1], "SR_CTAID.Z": c[2],
            "SR_LANEID": linear % 32, "SR_CgaCtaId": c[0] % meta.get("cluster", 1),
            "SR_SWINHI": 0x7FFF, "SRZ": 0}


# --------------------------------------------------------------------------- the measure

def analyze(cfg_text, meta, kernel):
    """Hot-loop measures of one kernel (see the module docstring).

    Returns a dict; `error` is set (and the rest is missing) when the measure
    could not be taken. It never raises: the comparison run (and CI) must not
    fail for a measurement reason, whatever a future compiler emits."""
    try:
        return _analyze(cfg_text, meta, kernel)
    except Exception as e:  # noqa: BLE001 (see above)
        return {"error": "%s: %s" % (type(e).__name__, e)}


def iteration_path(trace, fn, lp):
    """The instructions one steady-state iteration of loop `lp` executes (predicated-off
    ones left out): from a visit of its header in the middle of the run up to the next
    visit or the first instruction outside the loop, whichever comes first."""
    body = {i.off for b in lp.blocks for i in fn.blocks[b].instrs}
    head = fn.blocks[lp.header].instrs[0].off
    starts = [k for k, (pc, _) in enumerate(trace) if pc == head]
    if not starts:
        return []
    k = starts[len(starts) // 2]
    code = {i.off: i for b in fn.blocks.values() for i in b.instrs}
    path = [code[trace[k][0]]]
    for pc, on in trace[k + 1:]:
        if pc == head or pc not in body:
            break
        if on:
            path.append(code[pc])
    return path


def per_group(meta, s, l, code):
    """The marginal cost of one *group* of elements (the meta's `group`: e.g. a GEMM's
    k-tile of 4 HGMMAs), from the two runs: the unit instructions it executes and the
    other (non-NOP) instructions, each (large - small) / (groups at large - at small).
    Independent of how the compilers unrolled the loop. None without a `group` key."""
    g = meta.get("group")
    if not g:
        return None
    per = g["elements"]
    d_groups = (l["elements"] - s["elements"]) / per
    if d_groups <= 0:
        raise Unknown("the meta's sizes give no more %ss at the large size" % g["name"])
    unit = set(meta.get("unit", ["LDG"]))

    def units(run, key):
        return sum(n for o, n in run[key].items() if code[o].base in unit)

    # Executed units (predicated on); the rest of the count (predicated-off ones
    # included, as in `executed per element`) is "other".
    d_units = units(l, "active") - units(s, "active")
    d_other = (l["total"] - s["total"]) - (units(l, "count") - units(s, "count"))
    return {"name": g["name"], "units": d_units / d_groups, "other": d_other / d_groups}


def _analyze(cfg_text, meta, kernel):
    funcs = parse_bbcfg(cfg_text)
    fn = next((f for f in funcs if f.name == kernel), None)
    if fn is None:
        raise Unknown("no function %s in the CFG" % kernel)
    unit = set(meta.get("unit", ["LDG"]))
    ebytes = meta.get("element_bytes", 4)
    loops = []
    for f in funcs:
        loops.extend(natural_loops(f))
    runs = {}
    upe = meta.get("units_per_element", 1)
    sizes = [k for k in ("small", "large") if k in meta["sizes"]]
    for size in sizes:
        sz = meta["sizes"][size]
        it = Interpreter(funcs, kernel, constant_bank(meta, sz), specials(meta),
                         limit=meta.get("step_limit", 200_000), trace=True)
        it.run()
        units = sum(n * unit_elements(it.code[o], unit, ebytes) for o, n in it.active.items())
        total = sum(n for o, n in it.count.items() if it.code[o].base != NOP)
        runs[size] = {"count": it.count, "active": it.active, "trace": it.trace, "total": total, "elements": sz["elements"],
                      "units": units, "guesses": it.guesses}
        if units != upe * sz["elements"]:
            raise Unknown("the %s run executed %d %s where the meta expects %d x %d elements"
                          % (size, units, "/".join(sorted(unit)), upe, sz["elements"]))
    s = runs["small"]
    l = runs.get("large", s)
    d_elems = l["elements"] - s["elements"]
    d_total = l["total"] - s["total"]
    if d_elems:
        per_elem = d_total / d_elems
        fixed = s["total"] - per_elem * s["elements"]
    else:
        per_elem, fixed = s["total"] / s["elements"], 0.0

    fmap = {f.name: f for f in funcs}

    def header_runs(run, lp):
        first = fmap[lp.function].blocks[lp.header].instrs[0].off
        return run["count"].get(first, 0)

    hot = [lp for lp in loops if header_runs(l, lp) > header_runs(s, lp)]
    executed_fixed = [lp for lp in loops if lp not in hot and header_runs(s, lp) > 0]
    inner = innermost(hot)
    rows = []
    for lp in sorted(inner, key=lambda x: min(i.off for i in x.instrs(fmap[x.function]))):
        f = fmap[lp.function]
        ins = [i for i in lp.instrs(f) if i.base != NOP]
        iters = header_runs(l, lp) - header_runs(s, lp)
        executed = sum(l["count"].get(i.off, 0) - s["count"].get(i.off, 0) for i in ins)
        elems = sum((l["active"].get(i.off, 0) - s["active"].get(i.off, 0)) * unit_elements(i, unit, ebytes)
                    for i in ins)
        straight = executed == iters * len(ins)
        static_elems = sum(unit_elements(i, unit, ebytes) for i in ins)
        per_iter = len(ins) if straight else executed / iters
        epi = static_elems if straight else elems / iters
        path = iteration_path(l["trace"], f, lp)
        kinds, kind = GLOBAL_LOADS, "global"
        if not any(i.base in GLOBAL_LOADS for i in ins):
            kinds, kind = SHARED_LOADS, "shared"
        gl = loads_in_flight(path, kinds)
        rows.append({
            "first": ins[0].off if ins else None, "last": ins[-1].off if ins else None,
            "instructions": len(ins), "per_iteration": per_iter, "elements_per_iteration": epi,
            "per_element": per_iter / epi if epi else None, "straight": straight,
            "loads_in_flight": gl, "load_kind": kind,
        })
    hot_offs = {i.off for lp in hot for b in lp.blocks for i in fmap[lp.function].blocks[b].instrs}
    const_offs = {i.off for lp in loops if lp not in hot for b in lp.blocks
                  for i in fmap[lp.function].blocks[b].instrs} - hot_offs
    code = {i.off: i for f in funcs for b in f.blocks.values() for i in b.instrs}
    in_const = sum(n for o, n in s["count"].items() if o in const_offs and code[o].base != NOP)
    loop_sum = sum(r["per_element"] for r in rows if r["per_element"] is not None) if rows else None
    return {
        "per_group": per_group(meta, s, l, code),
        "hot_loops": rows,
        "hot_loop_per_element": loop_sum,
        "executed_per_element": per_elem,
        "fixed_loops": len(executed_fixed),
        "fixed_loop_instructions": in_const,
        "fixed_cost": fixed,
        "guesses": s["guesses"],
        "elements": (s["elements"], l["elements"]),
        "totals": (s["total"], l["total"]),
    }
