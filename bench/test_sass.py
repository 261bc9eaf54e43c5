"""Self-test of bench/sass.py over saved nvdisasm listings (no CUDA tool needed).

Run: python3 bench/peer.py --selftest   (CI does), or python3 -m unittest bench/test_sass.py.

bench/fixtures/NAME.{kdslc,nvcc}.cfg are `nvdisasm -bbcfg -poff` of the six
bench kernels as kdslc (main at ee9bffa) and nvcc 13.5.37 compiled them,
assembled by ptxas 13.5 for sm_90, and of the tensor-core GEMM (hopper_gemm,
kdslc of branch hopper-gemm, for sm_90a: `peer.py --save`) and its fp8
instantiation (hopper_gemm__ELEM_e4m3, kdslc of branch i17-cluster). The expected numbers below were checked by
hand against the listings (docs/performance.md, "Hot loops, kdslc vs nvcc",
quotes the loops): they test the analysis, not today's compiler, so a
compiler change does not touch them.
"""
import os
import re
import sys
import tomllib
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sass  # noqa: E402

FIX = os.path.join(HERE, "fixtures")
KERNELS = os.path.join(HERE, "kernels")


def fixture(name, who):
    with open(os.path.join(FIX, "%s.%s.cfg" % (name, who))) as f:
        return f.read()


def meta(name):
    with open(os.path.join(KERNELS, name + ".meta"), "rb") as f:
        return tomllib.load(f)


# kernel -> compiler -> (hot-loop SASS/element, executed SASS/element,
#                        loads in flight per hot loop, SASS per hot-loop iteration)
EXPECTED = {
    "reduce_sum": {"kdslc": (7.0, 7.0, [1], [7]), "nvcc": (6.0, 6.0, [1], [6])},
    "cluster_sum": {"kdslc": (7.0, 7.0, [1], [7]), "nvcc": (6.0, 6.0, [1], [6])},
    # three passes over the row; nvcc unrolls the first two by 4
    "softmax_rows": {"kdslc": (38.0, 38.0, [1, 1, 1], [8, 14, 16]),
                     "nvcc": (30.5, 30.5, [4, 4, 1], [19, 43, 15])},
    # per FFMA: 61 and 59 instructions for 16 FFMAs a tile
    "sgemm_tiled": {"kdslc": (61 / 16, 61 / 16, [2], [61]), "nvcc": (59 / 16, 59 / 16, [2], [59])},
    # no loop: the whole thread, one element
    "saxpy": {"kdslc": (None, 18.0, [], []), "nvcc": (None, 19.0, [], [])},
    # kdslc: ptxas unrolled the 8-trip inner loop into a x4 loop (+ peel/remainder);
    # nvcc: the chunk loop itself is the innermost hot loop (its x16 loop never runs
    # for 8 elements a thread), 92 instructions executed for 8 elements a chunk.
    "pipeline_sum": {"kdslc": (3.0, 10.375, [4], [12]), "nvcc": (11.5, 11.5, [8], [92.0])},
    # per HGMMA of consumer thread 130: kdslc's k loop executes 46 instructions for 4
    # HGMMAs (the TRYWAIT retry blocks out of line); nvcc unrolled it by 2, 124 for 8.
    "hopper_gemm": {"kdslc": (11.5, 11.5, [0], [46.0]), "nvcc": (15.5, 15.5, [0], [124.0])},
}


class HandChecked(unittest.TestCase):
    def test_six_kernels_both_compilers(self):
        for name, by in EXPECTED.items():
            for who, (loop, executed, flight, per_iter) in by.items():
                with self.subTest(kernel=name, compiler=who):
                    r = sass.analyze(fixture(name, who), meta(name), name)
                    self.assertNotIn("error", r, r.get("error"))
                    if loop is None:
                        self.assertIsNone(r["hot_loop_per_element"])
                    else:
                        self.assertAlmostEqual(r["hot_loop_per_element"], loop)
                    self.assertAlmostEqual(r["executed_per_element"], executed)
                    self.assertEqual([h["loads_in_flight"] for h in r["hot_loops"]], flight)
                    self.assertEqual([h["per_iteration"] for h in r["hot_loops"]], per_iter)
                    self.assertEqual(r["guesses"] >= 0, True)

    def test_the_five_step_shuffle_loop_is_a_constant_trip_loop(self):
        # kdslc's `while d > 0 { ...; d = d >> 1 }`: 5 iterations of 5 instructions,
        # where nvcc's unrolled reduction is straight-line code.
        r = sass.analyze(fixture("reduce_sum", "kdslc"), meta("reduce_sum"), "reduce_sum")
        self.assertEqual(r["fixed_loop_instructions"], 25)
        r = sass.analyze(fixture("reduce_sum", "nvcc"), meta("reduce_sum"), "reduce_sum")
        self.assertEqual(r["fixed_loop_instructions"], 0)

    def test_the_gemm_per_k_tile(self):
        """The tensor-core table's measure: per k-tile (4 HGMMAs), 4 HGMMAs and the
        other instructions, both compilers, however each unrolled the loop: kdslc's
        loop is one k-tile of 46 instructions, nvcc's two of 62 (checked by hand
        against the listings: the stage's descriptors, the wait, 4 HGMMAs, the lagged
        release, the loop)."""
        m = meta("hopper_gemm")
        for who, other in (("kdslc", 42.0), ("nvcc", 58.0)):
            with self.subTest(compiler=who):
                r = sass.analyze(fixture("hopper_gemm", who), m, "hopper_gemm")
                self.assertNotIn("error", r, r.get("error"))
                self.assertEqual(r["per_group"], {"name": "k-tile", "units": 4.0, "other": other})
        # Kernels without a group have none.
        r = sass.analyze(fixture("reduce_sum", "kdslc"), meta("reduce_sum"), "reduce_sum")
        self.assertIsNone(r["per_group"])

    def test_the_fp8_gemm_per_k_tile(self):
        """The fp8 variant of the .meta (`[[variants]]`, peer.py): per 128-wide
        k-tile, 4 QGMMA.64x256x32 and the same 42 other instructions as the bf16
        loop (a stage's rows are 128 bytes either way)."""
        m = meta("hopper_gemm")
        (v,) = [v for v in m["variants"] if v["name"] == "hopper_gemm__ELEM_e4m3"]
        vm = {k: x for k, x in m.items() if k != "variants"}
        vm.update({k: x for k, x in v.items() if k not in ("name", "sample", "consts")})
        r = sass.analyze(fixture("hopper_gemm__ELEM_e4m3", "kdslc"), vm, "hopper_gemm__ELEM_e4m3")
        self.assertNotIn("error", r, r.get("error"))
        self.assertEqual(r["per_group"], {"name": "k-tile", "units": 4.0, "other": 42.0})

    def test_tensor_maps_take_128_aligned_bytes(self):
        # `.param .align 128 .b8 a[128]`: a and b at 0x280 and 0x300, c at 0x380.
        layout = sass.param_layout(["tmap", "tmap", "ptr", "u32", "u32", "u32"])
        self.assertEqual(layout, [(0x280, 128), (0x300, 128), (0x380, 8), (0x388, 4), (0x38C, 4), (0x390, 4)])

    def test_pipeline_sum_shared_loads(self):
        r = sass.analyze(fixture("pipeline_sum", "nvcc"), meta("pipeline_sum"), "pipeline_sum")
        (h,) = r["hot_loops"]
        self.assertEqual(h["load_kind"], "shared")
        self.assertFalse(h["straight"])
        self.assertEqual(h["elements_per_iteration"], 8)


class Cfg(unittest.TestCase):
    def test_loop_headers_are_the_backward_branch_targets(self):
        """Dominator-based natural loops agree with the listing's backward branches
        (every fixture's CFG is reducible and laid out with loops bottom-tested)."""
        for fname in sorted(os.listdir(FIX)):
            name, who, _ = fname.split(".")
            with self.subTest(fixture=fname):
                for fn in sass.parse_bbcfg(fixture(name, who)):
                    reach = sass.reachable(fn)
                    first = {b: fn.blocks[b].instrs[0].off for b in reach if fn.blocks[b].instrs}
                    backward = set()
                    for b in reach:
                        for ins in fn.blocks[b].instrs:
                            m = re.search(r"`\(([^)]+)\)", ins.text)
                            if ins.base == "BRA" and m and m.group(1) in first \
                                    and first[m.group(1)] <= ins.off:
                                backward.add(m.group(1))
                    headers = {lp.header for lp in sass.natural_loops(fn)}
                    self.assertLessEqual(headers, backward)
                    # a backward branch that is no back edge: out-of-line code (nvcc's
                    # BRA.DIV slow path of the shuffle reduction) jumping back
                    dom, _ = sass.dominators(fn)
                    for t in backward - headers:
                        srcs = [b for b in reach if t in fn.blocks[b].succs]
                        self.assertTrue(srcs and all(t not in dom[b] for b in srcs))

    def test_parse_every_instruction(self):
        fns = sass.parse_bbcfg(fixture("softmax_rows", "kdslc"))
        self.assertEqual([f.name for f in fns],
                         ["softmax_rows", "$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath"])
        offs = sorted(i.off for f in fns for b in f.blocks.values() for i in b.instrs)
        self.assertEqual(offs, sorted(set(offs)))
        self.assertEqual(offs[0], 0)
        ins = next(i for f in fns for b in f.blocks.values() for i in b.instrs if i.off == 0x680)
        self.assertEqual((ins.base, ins.opcode, ins.ops), ("LDG", "LDG.E.CONSTANT", ["R10", "desc[UR6][R10.64]"]))

    def test_innermost_of_nested_loops(self):
        a = sass.Loop("h1", {"h1", "b", "h2", "c"}, "f")
        b = sass.Loop("h2", {"h2", "c"}, "f")
        c = sass.Loop("h3", {"h3"}, "g")
        self.assertEqual(sass.innermost([a, b, c]), [b, c])


class Registers(unittest.TestCase):
    def ins(self, text):
        return sass.parse_instr(0, text)

    def test_dest_and_sources(self):
        self.assertEqual(sass.dest_and_sources(self.ins("LDG.E.CONSTANT R3, desc[UR4][R2.64] ;")), ([3], [2, 3]))
        self.assertEqual(sass.dest_and_sources(self.ins("LDS.128 R12, [UR4] ;")), ([12, 13, 14, 15], []))
        self.assertEqual(sass.dest_and_sources(self.ins("IMAD.WIDE.U32 R2, R0, 0x4, R4 ;")), ([2, 3], [0, 4, 5]))
        self.assertEqual(sass.dest_and_sources(self.ins("ISETP.GE.U32.AND P0, PT, R0, UR6, PT ;")), ([], [0]))
        self.assertEqual(sass.dest_and_sources(self.ins("STS [R0], R7 ;")), ([], [0, 7]))
        self.assertEqual(sass.dest_and_sources(self.ins("LOP3.LUT P0, R4, R11, 0x1f, RZ, 0xc0, !PT ;")), ([4], [11]))

    def test_loads_in_flight_layout_order(self):
        body = [self.ins(t) for t in (
            "IMAD.WIDE.U32 R10, R0, 0x4, R6", "LDG.E.CONSTANT R11, desc[UR6][R10.64]",
            "IMAD.WIDE.U32 R12, R13, 0x4, R6", "LDG.E.CONSTANT R13, desc[UR6][R12.64]",
            "LDG.E.CONSTANT R15, desc[UR6][R14.64]", "FMNMX R4, R11, R4, !PT",
            "LDG.E.CONSTANT R17, desc[UR6][R16.64]")]
        self.assertEqual(sass.loads_in_flight(body), 3)
        # overwriting a pending destination ends the run of loads too
        body = [self.ins("LDG.E R2, desc[UR4][R2.64]"), self.ins("MOV R2, RZ"), self.ins("LDG.E R3, desc[UR4][R4.64]")]
        self.assertEqual(sass.loads_in_flight(body), 1)

    def test_unit_width(self):
        self.assertEqual(sass.unit_elements(self.ins("LDG.E.U8 R4, desc[UR4][R2.64]"), {"LDG"}, 1), 1)
        self.assertEqual(sass.unit_elements(self.ins("LDG.E.U16 R4, desc[UR4][R2.64]"), {"LDG"}, 1), 2)
        self.assertEqual(sass.unit_elements(self.ins("STG.E.128 desc[UR4][R2.64], R4"), {"STG"}, 4), 4)
        self.assertEqual(sass.unit_elements(self.ins("LDG.E.128 R4, desc[UR4][R2.64]"), {"LDG"}, 4), 4)
        self.assertEqual(sass.unit_elements(self.ins("LDG.E.64 R4, desc[UR4][R2.64]"), {"LDG"}, 4), 2)
        self.assertEqual(sass.unit_elements(self.ins("LDG.E R4, desc[UR4][R2.64]"), {"LDG"}, 4), 1)
        self.assertEqual(sass.unit_elements(self.ins("FFMA R4, R1, R2, R3"), {"LDG"}, 4), 0)


def run_one(lines, regs=None, preds=None, cbank=None):
    """Executes straight-line instructions on a fresh interpreter state."""
    text = "\n".join("%04x: %s" % (16 * k, l) for k, l in enumerate(lines))
    it = sass.Interpreter([], "k", cbank or {}, {"SR_TID.X": 7})
    it.r, it.p = dict(regs or {}), dict(preds or {})
    for line in text.splitlines():
        off, body = line.split(":", 1)
        it.execute(sass.parse_instr(int(off, 16), body))
    return it


class Interpreter(unittest.TestCase):
    def test_integer_semantics(self):
        it = run_one([
            "S2R R0, SR_TID.X",                       # 7
            "IMAD R1, R0, 0x100, R0",                 # 7*256 + 7
            "LEA R2, R0, 0x10, 0x4",                  # (7 << 4) + 16
            "LEA.HI R3, R4, 0x1, RZ, 0x19",           # 1 + (986 >> 7)
            "LOP3.LUT P0, R5, R0, 0x3, RZ, 0xc0, !PT",  # 7 & 3 = 3, P0 = true
            "SHF.R.U32.HI R6, RZ, 0x1, R0",           # 3
            "SHF.L.U32 R7, R0, 0x1f, RZ",             # 0x80000000
            "IADD3 R8, -R0, 0x10, RZ",                # 9
            "IMAD.IADD R9, R0, 0x1, -R8",             # -2
            "ISETP.GE.U32.AND P1, PT, R9, R0, PT",    # 0xfffffffe >= 7 unsigned: true
            "ISETP.GE.AND P2, PT, R9, R0, PT",        # -2 >= 7 signed: false
            "ISETP.LE.U32.OR P3, PT, R0, 0x3, P1",    # false or true
            "PLOP3.LUT P4, PT, P2, PT, PT, 0x8, 0x0",  # ~a & b & c = !P2
            "SEL R10, R0, 0x5, P2",                   # 5
            "PRMT R11, R12, 0x7604, R13",
            "IMAD.WIDE.U32 R14, R0, 0x4, R16",
            "VIADD R18, R0, 0xffffffff",              # 6
            "SGXT.U32 R19, R20, 0x4",                 # 0xab & 0xf
            "IMNMX.U32 R21, R0, R9, PT",              # min(7, 0xfffffffe) unsigned
            "VIMNMX R22, R0, R9, PT",                 # min(7, -2) signed
            "IADD3.X R23, R0, R0, RZ, P0, !PT",       # 7 + 7 + carry (P0)
            "SEL.X R24, R0, R0, P0",                  # an unmodelled carry form: unknown
        ], regs={"R4": 986, "R12": 0x44332211, "R13": 0x88776655, "R16": 0xFFFFFFF0, "R17": 1, "R20": 0xAB})
        r, p = it.r, it.p
        self.assertEqual((r["R0"], r["R1"], r["R2"], r["R3"]), (7, 7 * 256 + 7, 128, 8))
        self.assertEqual((r["R5"], p["P0"], r["R6"], r["R7"]), (3, True, 3, 0x80000000))
        self.assertEqual((r["R8"], r["R9"]), (9, 0xFFFFFFFE))
        self.assertEqual((p["P1"], p["P2"], p["P3"], p["P4"]), (True, False, True, True))
        self.assertEqual(r["R10"], 5)
        self.assertEqual(r["R11"], 0x88771155)
        self.assertEqual((r["R14"], r["R15"]), (0x0C, 2))   # 0x1_FFFFFFF0 + 28
        self.assertEqual((r["R18"], r["R19"]), (6, 0xB))
        self.assertEqual((r["R21"], r["R22"], r["R23"], r["R24"]), (7, 0xFFFFFFFE, 15, None))

    def test_64_bit_carry_chains(self):
        """Pointer arithmetic and 64-bit compares as ptxas writes them."""
        it = run_one([
            "IADD3 R2, P0, R4, 0x1000, RZ",           # low word of p + 0x1000, carry out
            "IADD3.X R3, RZ, R5, RZ, P0, !PT",        # high word + carry
            "ISETP.GE.U32.AND P1, PT, R2, R6, PT",    # (R3:R2) >= (R7:R6), low words
            "ISETP.GE.U32.AND.EX P1, PT, R3, R7, PT, P1",
            "ISETP.LT.U32.AND P2, PT, R2, R6, PT",
            "ISETP.LT.U32.AND.EX P2, PT, R3, R7, PT, P2",
            "IADD3 R8, P3, -R9, R10, RZ",             # 5 - 0 carries (two's complement)
            "LEA R11, P4, R12, R14, 0x2",             # (a << 2) + b, carry out
            "LEA.HI.X R13, R12, R15, R16, 0x2, P4",   # high word of ((R16:R12) << 2) + R15 + carry
            "IMAD.X R17, RZ, RZ, R5, P0",             # R5 + carry
            "IMAD.HI.U32 R18, R12, 0x10, RZ",         # (a * 16) >> 32
        ], regs={"R4": 0xFFFFF800, "R5": 0x7F, "R6": 0x00000100, "R7": 0x80,
                 "R9": 0, "R10": 5, "R12": 0xC0000001, "R14": 0x10, "R15": 0x7F, "R16": 0})
        r, p = it.r, it.p
        self.assertEqual((r["R2"], p["P0"], r["R3"]), (0x800, True, 0x80))
        self.assertEqual((p["P1"], p["P2"]), (True, False))        # 0x80_00000800 >= 0x80_00000100
        self.assertEqual((r["R8"], p["P3"]), (5, True))
        self.assertEqual((r["R11"], p["P4"]), (0x14, False))        # 0xC0000001 << 2 = 0x3_00000004
        self.assertEqual(r["R13"], 0x7F + 3)
        self.assertEqual(r["R17"], 0x80)
        self.assertEqual(r["R18"], 0xC)

    def test_unknown_values_spread(self):
        it = run_one(["MOV R1, R99", "IADD3 R3, R1, 0x1, RZ", "ISETP.NE.AND P0, PT, R3, RZ, PT",
                      "ISETP.NE.OR P1, PT, R3, RZ, !PT", "ISETP.NE.OR P2, PT, R3, RZ, PT"], preds={})
        self.assertIsNone(it.r["R1"])
        self.assertIsNone(it.r["R3"])
        self.assertIsNone(it.p["P0"])
        self.assertIsNone(it.p["P1"])
        self.assertTrue(it.p["P2"])              # unknown OR true


    def test_float_semantics(self):
        one, two = 0x3F800000, 0x40000000
        it = run_one([
            "LDG.E.CONSTANT R0, desc[UR4][R2.64]",    # every load reads 1.0
            "FADD R1, R0, R0",                        # 2.0
            "FADD R2, -R1, R0",                       # -1.0
            "FFMA R3, R1, R1, -1",                    # 3.0 (immediates are floats)
            "FMNMX R4, R2, R1, !PT",                  # max = 2.0
            "FMNMX R5, R2, R1, PT",                   # min = -1.0
            "FMUL R6, R1, 1.4426950216293334961",
            "MUFU.EX2 R7, R1",                        # 4.0
            "MUFU.RCP R8, R1",                        # 0.5
            "FSETP.GEU.AND P0, PT, R2, -126, PT",     # -1 >= -126
            "FCHK P1, R0, R1",                        # 1 / 2: fast path
            "FCHK P2, R0, RZ",                        # 1 / 0: slow path
            "HFMA2.MMA R9, -RZ, RZ, 0, 0.00048828125",  # the integer 0x1000
            "SHFL.DOWN PT, R10, R1, 0x10, 0x1f",      # the thread's own value
        ])
        r, p = it.r, it.p
        self.assertEqual((r["R0"], r["R1"], r["R2"]), (one, two, 0xBF800000))
        self.assertEqual((r["R3"], r["R4"], r["R5"]), (0x40400000, two, 0xBF800000))
        self.assertEqual(r["R6"], sass.f32(2.0 * 1.4426950216293334961))
        self.assertEqual((r["R7"], r["R8"]), (0x40800000, 0x3F000000))
        self.assertEqual((p["P0"], p["P1"], p["P2"]), (True, False, True))
        self.assertEqual((r["R9"], r["R10"]), (0x1000, two))


class NeverRaises(unittest.TestCase):
    def test_bad_inputs_give_an_error_not_an_exception(self):
        m = meta("reduce_sum")
        for text in ("", "digraph f {}", "garbage\n" * 10, fixture("saxpy", "kdslc")):
            with self.subTest(text=text[:20]):
                r = sass.analyze(text, m, "reduce_sum")
                self.assertIn("error", r)

    def test_a_wrong_element_count_is_reported(self):
        m = meta("reduce_sum")
        m["sizes"]["small"]["elements"] = 31
        r = sass.analyze(fixture("reduce_sum", "kdslc"), m, "reduce_sum")
        self.assertIn("elements", r["error"])

    def test_a_missing_meta_key_is_reported(self):
        m = meta("reduce_sum")
        del m["sizes"]
        self.assertIn("error", sass.analyze(fixture("reduce_sum", "kdslc"), m, "reduce_sum"))

    def test_a_loop_that_never_ends_is_reported(self):
        # an mbarrier-style spin whose predicate the interpreter cannot know takes its
        # fall-through; a branch back on a known-true predicate must hit the limit.
        dot = ('subgraph "cluster_k" {\n"k"\n[label="{<entry>0000:\\ \\ \\ MOV\\ R0,\\ 0x1\\ ;\\l}"]\n'
               '"k":entry:s -> ".L_x_0":entry:n [style=solid];\n".L_x_0"\n'
               '[label="{<entry>.L_x_0:\\l|<exit0>0010:\\ \\ \\ BRA\\ `(.L_x_0)\\ ;\\l}"]\n'
               '".L_x_0":exit0:e -> ".L_x_0":entry:n [style=solid];\n}\n')
        m = {"params": [], "block": [32, 1, 1], "sizes": {"small": {"elements": 1}}, "step_limit": 1000}
        fns = sass.parse_bbcfg(dot)
        self.assertEqual([lp.header for lp in sass.natural_loops(fns[0])], [".L_x_0"])
        it = sass.Interpreter(fns, "k", {}, {}, limit=1000)
        with self.assertRaises(sass.Unknown):
            it.run()
        self.assertIn("error", sass.analyze(dot, m, "k"))


if __name__ == "__main__":
    unittest.main()
