#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Write the small seed corpora in fuzz/seeds/<harness>/ (committed; rerun to
regenerate: /usr/bin/python3 fuzz/make_seeds.py). Needs numpy, h5py and PIL
(Debian python3-numpy, python3-h5py, python3-pil); no torch: the pickles are
written by Python's pickle with stand-in torch modules, exactly as
torch.save's pickler emits them (protocol 2, persistent ids
('storage', torch.XStorage, key, 'cpu', numel), _rebuild_tensor_v2 REDUCEs,
OrderedDict with a _metadata BUILD). tools/fuzz_all.sh adds seeds made from
the fixtures at run time (data.pkl of each .pt, the config JSON files).
"""
import collections
import io
import json
import os
import pickle
import struct
import sys
import types
import zipfile
import zlib

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds")

# --- stand-in torch for the pickler -------------------------------------------
torch = types.ModuleType("torch")
utils = types.ModuleType("torch._utils")
torch._utils = utils
sys.modules["torch"] = torch
sys.modules["torch._utils"] = utils


def _rebuild_tensor_v2(*a):
    pass


def _rebuild_parameter(*a):
    pass


for f in (_rebuild_tensor_v2, _rebuild_parameter):
    f.__module__ = "torch._utils"
    setattr(utils, f.__name__, f)
STORAGE_CLASSES = {}
for name in ("FloatStorage", "HalfStorage", "BFloat16Storage", "LongStorage", "DoubleStorage"):
    cls = type(name, (), {})
    cls.__module__ = "torch"
    setattr(torch, name, cls)
    STORAGE_CLASSES[name] = cls
ITEMSIZE = {"FloatStorage": 4, "HalfStorage": 2, "BFloat16Storage": 2, "LongStorage": 8, "DoubleStorage": 8}


class Storage:
    def __init__(self, kind, key, data):
        self.kind, self.key, self.data = kind, key, data
        self.numel = len(data) // ITEMSIZE[kind]


class Tensor:
    def __init__(self, storage, offset, size, stride, param=False):
        self.storage, self.offset, self.size, self.stride, self.param = storage, offset, size, stride, param

    def __reduce__(self):
        inner = (_rebuild_tensor_v2, (self.storage, self.offset, tuple(self.size), tuple(self.stride), False,
                                      collections.OrderedDict()))
        if self.param:
            return (_rebuild_parameter, (PlainTensor(self), True, collections.OrderedDict()))
        return inner


class PlainTensor(Tensor):
    def __init__(self, t):
        super().__init__(t.storage, t.offset, t.size, t.stride)


class TorchPickler(pickle.Pickler):
    def persistent_id(self, obj):
        if isinstance(obj, Storage):
            return ("storage", STORAGE_CLASSES[obj.kind], obj.key, "cpu", obj.numel)
        return None


def dumps(obj, protocol=2):
    b = io.BytesIO()
    TorchPickler(b, protocol=protocol).dump(obj)
    return b.getvalue()


def f32(vals):
    return np.asarray(vals, dtype="<f4").tobytes()


def f16(vals):
    return np.asarray(vals, dtype="<f2").tobytes()


def bf16(vals):
    a = np.asarray(vals, dtype="<f4").view("<u4")
    return ((a + 0x8000) >> 16).astype("<u2").tobytes()


def contiguous(shape):
    st, acc = [], 1
    for s in reversed(shape):
        st.insert(0, acc)
        acc *= s
    return st


def checkpoints():
    """(name, state-dict object to pickle, storages, protocol)."""
    rng = np.random.default_rng(0)
    out = []
    s0 = Storage("FloatStorage", "0", f32(rng.standard_normal(6)))
    s1 = Storage("HalfStorage", "1", f16(rng.standard_normal(3)))
    s2 = Storage("BFloat16Storage", "2", bf16(rng.standard_normal(4)))
    sd = collections.OrderedDict()
    sd["enc.weight"] = Tensor(s0, 0, [2, 3], [3, 1])
    sd["enc.bias"] = Tensor(s1, 0, [3], [1])
    sd["dec.weight"] = Tensor(s2, 0, [2, 2], [2, 1])
    out.append(("basic", {"model": sd}, [s0, s1, s2], 2))
    # views: transpose and offsets into one shared storage
    s3 = Storage("FloatStorage", "7", f32(np.arange(24)))
    sd = collections.OrderedDict()
    sd["t"] = Tensor(s3, 0, [4, 3], [1, 4])
    sd["slice"] = Tensor(s3, 12, [2, 2, 2], [4, 1, 2])
    sd["scalar"] = Tensor(s3, 23, [], [])
    sd["empty"] = Tensor(s3, 0, [0, 5], [5, 1])
    out.append(("views", {"model": sd, "epoch": 3}, [s3], 2))
    # top-level state dict of parameters, with _metadata (BUILD)
    s4 = Storage("FloatStorage", "0", f32([1, 2, 3, 4]))
    sd = collections.OrderedDict()
    sd["p"] = Tensor(s4, 0, [4], [1], param=True)
    sd["q"] = Tensor(s4, 1, [1, 3], [3, 1], param=True)
    sd._metadata = collections.OrderedDict({"": {"version": 1}})
    out.append(("params", sd, [s4], 2))
    # protocol 4 (FRAME, MEMOIZE, SHORT_BINUNICODE, STACK_GLOBAL)
    s5 = Storage("FloatStorage", "3", f32([0.5, -1.5]))
    out.append(("proto4", {"model": collections.OrderedDict(w=Tensor(s5, 0, [2], [1]))}, [s5], 4))
    # unsupported dtype (LongStorage), NaN values
    s6 = Storage("LongStorage", "4", struct.pack("<2q", 1, 2))
    s7 = Storage("FloatStorage", "5", f32([np.nan, np.inf]))
    out.append(("odd", {"model": collections.OrderedDict(a=Tensor(s6, 0, [2], [1]), b=Tensor(s7, 0, [2], [1]))},
                [s6, s7], 2))
    return out


def write(sub, name, data):
    d = os.path.join(OUT, sub)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def torch_zip(arch, pkl, storages, compress=zipfile.ZIP_STORED, byteorder=b"little"):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", compression=compress) as z:
        z.writestr(f"{arch}/data.pkl", pkl)
        if byteorder is not None:
            z.writestr(f"{arch}/byteorder", byteorder)
        for s in storages:
            z.writestr(f"{arch}/data/{s.key}", s.data)
        z.writestr(f"{arch}/version", b"3\n")
    return b.getvalue()


def structured(flags, pkl, storages):
    """fuzz_pt.c's odd-mode layout."""
    b = bytes([1, flags]) + struct.pack("<I", len(pkl)) + pkl
    for s in storages:
        k = s.key.encode()
        b += bytes([len(k)]) + k + struct.pack("<I", len(s.data)) + s.data
    return b


def make_pickles_and_pt():
    for name, obj, storages, proto in checkpoints():
        pkl = dumps(obj, proto)
        write("pickle", name + ".pkl", pkl)
        write("pt", name + ".struct", structured(2, pkl, storages))
        write("pt", name + ".zip", b"\0" + torch_zip("archive", pkl, storages))
    name, obj, storages, proto = checkpoints()[0]
    pkl = dumps(obj, proto)
    write("pt", "deflate.struct", structured(1 | 2, pkl, storages))
    write("pt", "deflate.zip", b"\0" + torch_zip("ckpt", pkl, storages, zipfile.ZIP_DEFLATED, None))
    write("pt", "big.struct", structured(2 | 4, pkl, storages))
    # hostile pickles
    write("pickle", "global_os_system.pkl", b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00idR.")
    write("pickle", "nested.pkl", b"\x80\x02" + b"(" * 50 + b"t" * 50 + b".")
    write("pickle", "memo.pkl", b"\x80\x02]q\x00h\x00ah\x00a.")
    write("pickle", "long1.pkl", b"\x80\x02\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f.")


def st_file(entries, meta=True, pad=True):
    hdr, blob = {}, b""
    if meta:
        hdr["__metadata__"] = {"format": "pt"}
    for key, dtype, shape, data in entries:
        hdr[key] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
    h = json.dumps(hdr, separators=(",", ":")).encode()
    if pad:
        h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + blob


def make_safetensors():
    rng = np.random.default_rng(1)
    write("safetensors", "basic.safetensors", st_file([
        ("a.weight", "F32", [2, 3], f32(rng.standard_normal(6))),
        ("a.bias", "F16", [3], f16(rng.standard_normal(3))),
        ("b", "BF16", [2, 1, 2], bf16(rng.standard_normal(4))),
    ]))
    write("safetensors", "scalar_empty.safetensors", st_file([
        ("s", "F32", [], f32([7.0])), ("e", "F32", [0, 4], b""), ("x", "F32", [1], f32([np.nan]))], meta=False))
    write("safetensors", "i64.safetensors", st_file([("steps", "I64", [1], struct.pack("<q", 5))], pad=False))


def make_h5():
    import h5py
    cfg = open(os.path.join(os.path.dirname(OUT), "..", "fixtures", "ckpt", "tiny_c_f32.config.json")).read()
    for libver in ("earliest", "latest"):
        path = os.path.join(OUT, "h5dump", f"dump_{libver}.h5")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with h5py.File(path, "w", libver=libver, track_order=True) as f:
            f.attrs["format"] = "samc-parity-dump"
            f.attrs["format_version"] = 1
            m = f.create_group("model")
            m.attrs["family"] = "sam2"
            m.attrs["config_json"] = cfg
            i = f.create_group("inputs")
            i.attrs["task"] = "image"
            i.attrs["max_hole_area"] = 0.0
            i.create_dataset("image_u8", data=np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3))
            p = i.create_group("prompts/0")
            p.create_dataset("point_coords", data=np.array([[1, 2], [3, 1]], dtype=np.float32))
            p.create_dataset("point_labels", data=np.array([1, 0], dtype=np.int64))
            p.create_dataset("box", data=np.array([0, 0, 3, 3], dtype=np.float32))
            p.attrs["multimask_output"] = np.bool_(True)
            t = f.create_group("trace/000000")
            t.attrs["module"] = "image_encoder.trunk.blocks.0"
            t.attrs["call"] = 0
            t.create_dataset("out/0", data=np.ones((1, 2, 2, 3), dtype=np.float32))
            t.create_dataset("in/0", data=np.zeros((2, 3), dtype=np.float16))
            t2 = f.create_group("trace/000001")
            t2.attrs["module"] = np.bytes_(b"sam_mask_decoder")
            t2.attrs["call"] = 0
            t2.attrs["frame_idx"] = h5py.Empty("f")
            o = f.create_group("outputs/0")
            o.create_dataset("masks", data=np.zeros((1, 4, 5), dtype=np.float32), compression="gzip")
            w = f.create_group("weights")
            w.create_dataset("a.weight", data=np.ones((2, 3), dtype=np.float32))
            w.create_dataset("a.bias", data=np.zeros(3, dtype=np.float16))
            w.create_dataset("s", data=np.float64(2.5))
            w.create_dataset("nested/x", data=np.ones((2,), dtype=np.float32), chunks=(1,))
    # a weights-only file (the h5 checkpoint form)
    path = os.path.join(OUT, "h5dump", "weights_only.h5")
    with h5py.File(path, "w") as f:
        w = f.create_group("weights")
        w.create_dataset("k", data=np.arange(6, dtype=np.float32).reshape(2, 3))
        w.create_dataset("i", data=np.arange(3, dtype=np.int32))


def png_chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)


def png16_rgb(w, h):
    raw = b"".join(b"\0" + struct.pack(">%dH" % (3 * w), *[(x * 4000 + y * 300 + c) % 65536 for x in range(w)
                                                           for c in range(3)]) for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0)) +
            png_chunk(b"IDAT", zlib.compress(raw)) + png_chunk(b"IEND", b""))


def make_images():
    from PIL import Image
    rng = np.random.default_rng(2)
    rgb = Image.fromarray(rng.integers(0, 255, (6, 8, 3), dtype=np.uint8), "RGB")

    def save(name, im, fmt, **kw):
        b = io.BytesIO()
        im.save(b, fmt, **kw)
        write("image", name, b.getvalue())

    save("rgb.png", rgb, "PNG")
    save("one.png", Image.new("RGB", (1, 1), (10, 20, 30)), "PNG")
    save("gray.png", rgb.convert("L"), "PNG")
    save("gray_alpha.png", rgb.convert("LA"), "PNG")
    save("rgba.png", rgb.convert("RGBA"), "PNG")
    save("palette.png", rgb.convert("P"), "PNG")
    save("gray16.png", Image.fromarray((np.arange(48, dtype=np.uint16) * 1000).reshape(6, 8)), "PNG")
    write("image", "rgb16.png", png16_rgb(5, 3))
    save("base.jpg", rgb, "JPEG", quality=80)
    save("prog.jpg", rgb, "JPEG", progressive=True)
    save("gray.jpg", rgb.convert("L"), "JPEG")
    save("rgb.bmp", rgb, "BMP")
    save("pal.bmp", rgb.convert("P"), "BMP")
    save("anim.gif", rgb.convert("P"), "GIF")
    save("rgb.tga", rgb, "TGA")
    save("rle.tga", rgb, "TGA", compression="tga_rle")
    save("rgb.ppm", rgb, "PPM")
    save("gray.pgm", rgb.convert("L"), "PPM")
    write("image", "tiny.hdr", b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 2 +X 2\n" + bytes(range(100, 116)))
    psd = (b"8BPS" + struct.pack(">H6xHIIHH", 1, 3, 2, 2, 8, 3) + struct.pack(">III", 0, 0, 0) +
           struct.pack(">H", 0) + bytes(range(12)))
    write("image", "tiny.psd", psd)


def make_configs():
    base = os.path.join(os.path.dirname(OUT), "..", "fixtures")
    for sub in ("ckpt/tiny_c_f32.config.json", "demo/tiny_d_demo.config.json"):
        with open(os.path.join(base, sub), "rb") as f:
            write("config_json", os.path.basename(sub), f.read())
    write("config_json", "minimal.json", json.dumps({"model": {"image_encoder": {
        "trunk": {"embed_dim": 96, "num_heads": 1}, "neck": {"d_model": 256}}}}).encode())


def make_cli():
    write("cli_args", "points.txt", b"10,20\n10,20,0\n-1,5\n3.5,1e3,1\n")
    write("cli_args", "box.txt", b"1,2,30,40\n30,2,1,40\n")
    write("cli_args", "numbers.txt", b"4\n1024\n0\nnan,1\ninf,2,1\n1e9,2\n")
    write("cli_args", "impl.txt", b"ref\nfast\nimage_encoder.trunk.blocks.3=ref\n@preprocess=fast\nsam_mask_decoder=gpu\n")


def make_frames():
    from PIL import Image
    rng = np.random.default_rng(3)

    def jpg(w, h, **kw):
        b = io.BytesIO()
        Image.fromarray(rng.integers(0, 255, (h, w, 3), dtype=np.uint8), "RGB").save(b, "JPEG", **kw)
        return b.getvalue()

    def dir_seed(files):
        out = b""
        for name, data in files:
            out += bytes([len(name)]) + name + struct.pack("<I", len(data)) + data
        return out

    write("frames_dir", "three.dir", dir_seed([(b"00000.jpg", jpg(8, 6)), (b"00001.jpg", jpg(8, 6)),
                                              (b"2.JPEG", jpg(8, 6, progressive=True)), (b"notes.txt", b"hi")]))
    write("frames_dir", "mixed_sizes.dir", dir_seed([(b"0.jpg", jpg(8, 6)), (b"1.jpg", jpg(6, 8))]))
    write("frames_dir", "bad_name.dir", dir_seed([(b"0.jpg", jpg(4, 4)), (b"frame.jpg", jpg(4, 4))]))
    write("frames_dir", "gray_dup.dir", dir_seed([(b"007.jpg", jpg(4, 4)), (b"7.jpeg", jpg(4, 4))]))


def make_h5_regressions():
    """Crafted dumps in tests/fuzz_regress/h5dump/ for the dump-reader fixes
    (docs/hostile_input.md): each was a crash, hang or huge allocation."""
    import h5py
    d = os.path.join(os.path.dirname(OUT), "..", "tests", "fuzz_regress", "h5dump")
    os.makedirs(d, exist_ok=True)

    def dump(name):
        f = h5py.File(os.path.join(d, name), "w")
        f.attrs["format"] = "samc-parity-dump"
        f.attrs["format_version"] = 1
        return f

    with h5py.File(os.path.join(d, "format_attr_two_vlen_strings.h5"), "w") as f:
        f.attrs.create("format", ["samc-parity-dump", "x"], dtype=h5py.string_dtype())
    with h5py.File(os.path.join(d, "format_attr_two_fixed_strings.h5"), "w") as f:
        f.attrs["format"] = np.array([b"samc-parity-dump", b"x"], dtype="S16")
    with dump("trace_call_nan.h5") as f:
        t = f.create_group("trace/000000")
        t.attrs["module"] = "image_encoder"
        t.attrs["call"] = np.nan
    with dump("never_written_huge_datasets.h5") as f:
        f.create_dataset("weights/big", shape=(2**31 - 1,), dtype="f4")
        f.create_dataset("inputs/image_u8", shape=(2**15, 2**15, 3), dtype="u1")
        f.create_dataset("inputs/prompts/0/point_labels", shape=(2**31 - 1,), dtype="i4")
        f["model"] = np.zeros(1, "f4")
    with dump("external_storage.h5") as f:
        f.create_dataset("weights/ext", shape=(4096,), dtype="f4", external=[("outside.bin", 0, 4 * 4096)])
        f.create_dataset("inputs/image_u8", shape=(64, 64, 3), dtype="u1", external=[("outside.bin", 0, 64 * 64 * 3)])
    layout = h5py.VirtualLayout(shape=(4096,), dtype="f4")
    layout[:] = h5py.VirtualSource("elsewhere.h5", "data", shape=(4096,))
    with dump("virtual_dataset.h5") as f:
        f.create_virtual_dataset("weights/v", layout)
        f.create_virtual_dataset("inputs/image_u8", layout)


def make_serve_requests():
    """fuzz_serve_request: a selector byte (0 predict, 1 concepts, 2 everything,
    3 video prompt, 4 propagate, 5 URL path), then the body or path."""
    seeds = [
        (0, b'{"points":[[100,90]]}'), (0, b'{"points":[[100,90,1],[20,30,0]],"box":[10,10,200,200],"multimask":false}'),
        (0, b'{"mask_input":{"prediction":3,"index":1},"png":true}'), (0, b'{"points":[[1e999,1]]}'),
        (1, b'{"text":"a dog","boxes":[[10,10,50,60],[100,20,150,90,"neg"]],"threshold":0.4}'),
        (2, b'{"points_per_side":8,"pred_iou_thresh":0,"crop_n_layers":1,"use_m2m":true}'),
        (3, b'{"frame":2,"obj_id":7,"points":[[5,5],[9,9,0]],"clear":false}'), (3, b'{"frame":0,"obj_id":1,"box":[1,1,40,30]}'),
        (4, b'{"start":1,"max_frames":3,"reverse":true}'),
        (5, b"/v1/images/0123456789abcdef0123456789abcdef/predict"), (5, b"/v1/videos/0123456789abcdef0123456789abcdef/frames/4"),
        (5, b"/web/app.js"), (5, b"/web/../x"),
    ]
    for i, (sel, body) in enumerate(seeds):
        write("serve_request", "%02d_%d.bin" % (i, sel), bytes([sel]) + body)


def make_videos():
    """fuzz_video_file: tiny videos of FFmpeg's test pattern in the containers
    and codecs samc reads (needs the ffmpeg command line), and cut copies."""
    import subprocess
    import tempfile
    kinds = [("mp4", ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-bf", "2", "-g", "3"]),
             ("webm", ["-c:v", "libvpx-vp9", "-g", "3"]), ("mkv", ["-c:v", "ffv1"]), ("avi", ["-c:v", "mpeg4"]),
             ("mov", ["-c:v", "mjpeg"]), ("gif", [])]
    with tempfile.TemporaryDirectory() as tmp:
        for ext, codec in kinds:
            path = os.path.join(tmp, "v." + ext)
            subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=24x16:rate=5:duration=1"] +
                           codec + [path], check=True)
            data = open(path, "rb").read()
            write("video_file", "testsrc." + ext, data)
            write("video_file", "cut." + ext, data[:len(data) * 2 // 3])


if __name__ == "__main__":
    make_pickles_and_pt()
    make_safetensors()
    make_h5()
    make_images()
    make_configs()
    make_cli()
    make_frames()
    make_h5_regressions()
    make_serve_requests()
    make_videos()
    for d in sorted(os.listdir(OUT)):
        files = os.listdir(os.path.join(OUT, d))
        print(d, len(files), sum(os.path.getsize(os.path.join(OUT, d, x)) for x in files), "bytes")
