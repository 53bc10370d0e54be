# SPDX-License-Identifier: Apache-2.0
"""The C API called directly through the binding's lib, with no samc class
in between: the oracle of the bit-for-bit tests (what a C program calling
include/samc.h gets)."""
import numpy as np

from samc._native import ffi, lib


def _ok(st, err):
    assert st == lib.SAMC_OK, ffi.string(err.msg).decode()


def _f32(a):
    return ffi.NULL if a is None else ffi.from_buffer("float[]", np.ascontiguousarray(a, np.float32))


def _i32(a):
    return ffi.NULL if a is None else ffi.from_buffer("int32_t[]", np.ascontiguousarray(a, np.int32))


class Model:
    def __init__(self, dump):
        """The model of a dump (conftest.model_files: its weights, config and vocabulary as files)."""
        from conftest import model_files

        path, config, vocab = model_files(dump)
        err = ffi.new("samc_error *")
        out = ffi.new("samc_model **")
        p = ffi.new("samc_model_params *", lib.samc_model_default_params())
        v = ffi.new("char[]", vocab.encode()) if vocab else ffi.NULL
        c = ffi.new("char[]", config.encode())
        p.vocab, p.config = v, c
        _ok(lib.samc_model_load(str(path).encode(), p, out, err), err)
        self.ptr = ffi.gc(out[0], lib.samc_model_free)


class Predictor:
    def __init__(self, model, impl="fast"):
        err = ffi.new("samc_error *")
        pp = ffi.new("samc_predictor_params *", lib.samc_predictor_default_params())
        name = ffi.new("char[]", impl.encode())
        pp.impl = name
        out = ffi.new("samc_predictor **")
        _ok(lib.samc_predictor_new(model.ptr, pp, out, err), err)
        self.ptr = ffi.gc(out[0], lib.samc_predictor_free)
        self.model = model

    def set_image(self, img):
        err = ffi.new("samc_error *")
        img = np.ascontiguousarray(img)
        _ok(lib.samc_predictor_set_image(self.ptr, ffi.from_buffer("uint8_t[]", img), img.shape[0], img.shape[1],
                                         err), err)

    def predict(self, coords=None, labels=None, box=None, mask=None, multimask=True, logits=True):
        err = ffi.new("samc_error *")
        rq = ffi.new("samc_predict_request *")
        keep = [_f32(coords), _i32(labels), _f32(box), _f32(mask)]
        rq.point_coords, rq.point_labels, rq.box, rq.mask_input = keep
        rq.n_points = 0 if coords is None else len(coords)
        rq.multimask_output, rq.return_logits = int(multimask), int(logits)
        m = ffi.new("samc_masks *")
        _ok(lib.samc_predictor_predict(self.ptr, rq, m, err), err)
        C, H, W, S = m.num_masks, m.height, m.width, m.low_res_size
        out = (np.frombuffer(ffi.buffer(m.masks, 4 * C * H * W), np.float32).reshape(C, H, W).copy(),
               np.frombuffer(ffi.buffer(m.iou, 4 * C), np.float32).copy(),
               np.frombuffer(ffi.buffer(m.low_res, 4 * C * S * S), np.float32).reshape(C, S, S).copy())
        lib.samc_masks_free(m)
        return out

    def predict_batch(self, B, coords=None, labels=None, boxes=None, multimask=True, logits=True):
        err = ffi.new("samc_error *")
        rq = ffi.new("samc_batch_request *")
        keep = [_f32(coords), _i32(labels), _f32(boxes)]
        rq.point_coords, rq.point_labels, rq.boxes = keep
        rq.batch = B
        rq.n_points = 0 if coords is None else np.asarray(coords).shape[1]
        rq.multimask_output, rq.return_logits = int(multimask), int(logits)
        m = ffi.new("samc_batch_masks *")
        _ok(lib.samc_predictor_predict_batch(self.ptr, rq, m, err), err)
        C, H, W, S = m.num_masks, m.height, m.width, m.low_res_size
        out = (np.frombuffer(ffi.buffer(m.masks, 4 * B * C * H * W), np.float32).reshape(B, C, H, W).copy(),
               np.frombuffer(ffi.buffer(m.iou, 4 * B * C), np.float32).reshape(B, C).copy())
        lib.samc_batch_masks_free(m)
        return out

    def amg_json(self, img, **params):
        """samc_amg_generate_masks with the given fields, as samc_amg_to_json text."""
        err = ffi.new("samc_error *")
        p = ffi.new("samc_amg_params *", lib.samc_amg_default_params())
        keep = []
        for k, v in params.items():
            if k == "output_mode":
                p.output_mode = {"binary_mask": lib.SAMC_AMG_BINARY_MASK,
                                 "uncompressed_rle": lib.SAMC_AMG_UNCOMPRESSED_RLE,
                                 "coco_rle": lib.SAMC_AMG_COCO_RLE}[v]
            elif k == "point_grids":
                grids = ffi.new("samc_amg_grid[]", len(v))
                for i, g in enumerate(v):
                    xy = ffi.from_buffer("double[]", np.ascontiguousarray(g, np.float64))
                    keep.append(xy)
                    grids[i].xy, grids[i].n = xy, len(g)
                keep.append(grids)
                p.point_grids, p.n_point_grids, p.points_per_side = grids, len(v), 0
            elif v is not None:
                setattr(p, k, v)
        r = ffi.new("samc_amg_result *")
        img = np.ascontiguousarray(img)
        _ok(lib.samc_amg_generate_masks(self.ptr, ffi.from_buffer("uint8_t[]", img), img.shape[0], img.shape[1], p,
                                        ffi.NULL, ffi.NULL, r, err), err)
        text = ffi.new("char **")
        _ok(lib.samc_amg_to_json(r, text, err), err)
        s = ffi.string(text[0]).decode()
        lib.samc_free(text[0])
        lib.samc_amg_result_free(r)
        return s


def track(model, frames_dir, prompts, start, count, reverse, impl="fast"):  # model: kept by the caller
    """samc_tracker_* over a dump's prompts: {frame: (obj_ids, logits)}."""
    err = ffi.new("samc_error *")
    tp = ffi.new("samc_tracker_params *", lib.samc_tracker_default_params())
    name = ffi.new("char[]", impl.encode())
    tp.impl = name
    out = ffi.new("samc_tracker **")
    _ok(lib.samc_tracker_new(model.ptr, tp, out, err), err)
    t = ffi.gc(out[0], lib.samc_tracker_free)
    _ok(lib.samc_tracker_open_frames_dir(t, str(frames_dir).encode(), err), err)
    for d, a in prompts:
        if "mask" in d:
            m = np.ascontiguousarray(d["mask"], np.float32)
            _ok(lib.samc_tracker_add_mask(t, a["frame_idx"], a["obj_id"], _f32(m), m.shape[0], m.shape[1], ffi.NULL,
                                          err), err)
        else:
            n = len(d["point_coords"])
            _ok(lib.samc_tracker_add_points(t, a["frame_idx"], a["obj_id"], _f32(d["point_coords"]) if n else ffi.NULL,
                                            _i32(d["point_labels"]) if n else ffi.NULL, n, _f32(d.get("box")),
                                            a.get("clear_old_points", 1), ffi.NULL, err), err)
    got = {}

    @ffi.callback("samc_status(void *, const samc_frame_masks *)")
    def on_frame(user, m):
        hw = m.height * m.width
        ids = [m.obj_ids[i] for i in range(m.n_obj)]
        got[m.frame_idx] = (ids, np.frombuffer(ffi.buffer(m.logits, 4 * m.n_obj * hw), np.float32)
                            .reshape(m.n_obj, 1, m.height, m.width).copy())
        return lib.SAMC_OK

    _ok(lib.samc_tracker_propagate(t, start, count, int(reverse), on_frame, ffi.NULL, err), err)
    return got


class Sam3:
    def __init__(self, model, threshold, impl="fast"):
        err = ffi.new("samc_error *")
        pp = ffi.new("samc_sam3_processor_params *", lib.samc_sam3_processor_default_params())
        name = ffi.new("char[]", impl.encode())
        pp.impl, pp.threshold = name, threshold
        out = ffi.new("samc_sam3_processor **")
        _ok(lib.samc_sam3_processor_new(model.ptr, pp, out, err), err)
        self.ptr = ffi.gc(out[0], lib.samc_sam3_processor_free)
        self.model = model  # freed after the processor

    def run(self, img, text, boxes, labels):
        err = ffi.new("samc_error *")
        img = np.ascontiguousarray(img)
        _ok(lib.samc_sam3_processor_set_image(self.ptr, ffi.from_buffer("uint8_t[]", img), img.shape[0],
                                              img.shape[1], err), err)
        if text is not None:
            _ok(lib.samc_sam3_processor_set_text(self.ptr, text.encode(), err), err)
        for b, l in zip(boxes, labels):
            _ok(lib.samc_sam3_processor_add_box(self.ptr, _f32(b), bool(l), err), err)
        r = ffi.new("samc_sam3_results *")
        _ok(lib.samc_sam3_processor_results(self.ptr, r, err), err)
        n, h, w = r.n, r.h, r.w
        return (np.frombuffer(ffi.buffer(r.scores, 4 * n), np.float32).copy() if n else np.zeros(0, np.float32),
                np.frombuffer(ffi.buffer(r.boxes, 16 * n), np.float32).reshape(n, 4).copy() if n else
                np.zeros((0, 4), np.float32),
                np.frombuffer(ffi.buffer(r.masks, 4 * n * h * w), np.float32).reshape(n, h, w).copy() if n else
                np.zeros((0, h, w), np.float32))
