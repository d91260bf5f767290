"""numpy references of torchvision's box ops, written from torchvision's documentation
(boxes as (batch index, x1, y1, x2, y2) rows, 0 <= x1 < x2, 0 <= y1 < y2; `aligned`
shifts the box by -0.5 pixel; `sampling_ratio` <= 0 samples ceil(size / bins) points per
bin) and, where the documentation says nothing (a point outside the map, a box smaller
than a pixel), from the Mask R-CNN / R-FCN definitions that its kernels follow."""
import math

import numpy as np


def bilinear_taps(height, width, y, x):
    """[(row, col, weight)] of RoIAlign's bilinear interpolation at (y, x): a point more
    than one pixel outside the map contributes nothing, one within a pixel of the border
    is clamped onto it."""
    if not (-1.0 <= y <= height and -1.0 <= x <= width):
        return []
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= height - 1:
        y0 = y1 = height - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= width - 1:
        x0 = x1 = width - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    hy, hx = 1.0 - ly, 1.0 - lx
    return [(y0, x0, hy * hx), (y0, x1, hy * lx), (y1, x0, ly * hx), (y1, x1, ly * lx)]


def _grid(size, bins, sampling_ratio):
    return sampling_ratio if sampling_ratio > 0 else int(math.ceil(size / bins))


def align_bins(roi, scale, ph, pw, sampling_ratio, aligned, height, width, clamp_size):
    """{(i, j): ([(row, col, weight)], count)}: the sample taps of each bin of one box."""
    off = 0.5 if aligned else 0.0
    x1, y1, x2, y2 = (float(v) * scale - off for v in roi[1:5])
    rw, rh = x2 - x1, y2 - y1
    if clamp_size:
        rw, rh = max(rw, 1.0), max(rh, 1.0)
    bh, bw = rh / ph, rw / pw
    gh, gw = _grid(rh, ph, sampling_ratio), _grid(rw, pw, sampling_ratio)
    bins = {}
    for i in range(ph):
        for j in range(pw):
            taps = []
            for iy in range(max(gh, 0)):
                yy = y1 + i * bh + (iy + 0.5) * bh / gh
                for ix in range(max(gw, 0)):
                    xx = x1 + j * bw + (ix + 0.5) * bw / gw
                    taps += bilinear_taps(height, width, yy, xx)
            bins[i, j] = (taps, gh * gw)
    return bins


def roi_align(x, rois, scale, ph, pw, sampling_ratio, aligned):
    n, c, h, w = x.shape
    out = np.zeros((rois.shape[0], c, ph, pw))
    for k, roi in enumerate(rois):
        b = int(roi[0])
        for (i, j), (taps, count) in align_bins(roi, scale, ph, pw, sampling_ratio, aligned,
                                                h, w, not aligned).items():
            acc = np.zeros(c)
            for r, q, wt in taps:
                acc += wt * x[b, :, r, q]
            out[k, :, i, j] = acc / max(count, 1)
    return out


def roi_align_backward(grad, rois, scale, ph, pw, shape, sampling_ratio, aligned):
    n, c, h, w = shape
    gin = np.zeros(shape)
    for k, roi in enumerate(rois):
        b = int(roi[0])
        for (i, j), (taps, count) in align_bins(roi, scale, ph, pw, sampling_ratio, aligned,
                                                h, w, not aligned).items():
            for r, q, wt in taps:
                gin[b, :, r, q] += wt * grad[k, :, i, j] / max(count, 1)
    return gin


def c_round(v):
    """C's round: halves away from zero."""
    return int(math.copysign(math.floor(abs(v) + 0.5), v))


def pool_bins(roi, scale, ph, pw, height, width, inclusive=True):
    """{(i, j): (h0, h1, w0, w1)}: the window of each bin of one box, clipped to the map.
    RoIPool's box spans round(x2) - round(x1) + 1 pixels (`inclusive`); PSRoIPool's one
    fewer (torchvision's convention: its own test reference, test_ops.py, and its kernels)."""
    x1, y1, x2, y2 = (c_round(float(v) * scale) for v in roi[1:5])
    extra = 1 if inclusive else 0
    rw, rh = max(x2 - x1 + extra, 1), max(y2 - y1 + extra, 1)
    bh, bw = rh / ph, rw / pw
    out = {}
    for i in range(ph):
        for j in range(pw):
            h0 = min(max(int(math.floor(i * bh)) + y1, 0), height)
            h1 = min(max(int(math.ceil((i + 1) * bh)) + y1, 0), height)
            w0 = min(max(int(math.floor(j * bw)) + x1, 0), width)
            w1 = min(max(int(math.ceil((j + 1) * bw)) + x1, 0), width)
            out[i, j] = (h0, h1, w0, w1)
    return out


def window_max(plane, h0, h1, w0, w1):
    """(max, flat index of its first occurrence) of a window; (0, -1) when it is empty;
    NaN never wins (a comparison with it is false)."""
    if h1 <= h0 or w1 <= w0:
        return 0.0, -1
    best, idx = -np.finfo(np.float32).max, -1
    width = plane.shape[1]
    for r in range(h0, h1):
        for q in range(w0, w1):
            if plane[r, q] > best:
                best, idx = plane[r, q], r * width + q
    return best, idx


def roi_pool(x, rois, scale, ph, pw):
    n, c, h, w = x.shape
    out = np.zeros((rois.shape[0], c, ph, pw))
    arg = np.zeros((rois.shape[0], c, ph, pw), np.int32)
    for k, roi in enumerate(rois):
        b = int(roi[0])
        for (i, j), win in pool_bins(roi, scale, ph, pw, h, w).items():
            for ch in range(c):
                out[k, ch, i, j], arg[k, ch, i, j] = window_max(x[b, ch], *win)
    return out, arg


def ps_roi_align(x, rois, scale, ph, pw, sampling_ratio):
    """Position-sensitive RoIAlign (R-FCN): output channel co, bin (i, j) reads input
    channel (co * ph + i) * pw + j; the box is shifted by -0.5 pixel, not clamped."""
    n, c, h, w = x.shape
    cout = c // (ph * pw)
    out = np.zeros((rois.shape[0], cout, ph, pw))
    mapping = np.zeros(out.shape, np.int32)
    for k, roi in enumerate(rois):
        b = int(roi[0])
        bins = align_bins(roi, scale, ph, pw, sampling_ratio, True, h, w, False)
        for co in range(cout):
            for (i, j), (taps, count) in bins.items():
                cin = (co * ph + i) * pw + j
                acc = sum((wt * x[b, cin, r, q] for r, q, wt in taps), 0.0)
                with np.errstate(invalid="ignore", divide="ignore"):
                    out[k, co, i, j] = np.float64(acc) / count
                mapping[k, co, i, j] = cin
    return out, mapping


def ps_roi_pool(x, rois, scale, ph, pw):
    """Position-sensitive RoIPool: the mean of each bin's window of its own channel (0
    for an empty window), the window clipped to the map. Unlike RoIPool, the box spans
    round(x2) - round(x1) pixels, not one more (`pool_bins(..., inclusive=False)`)."""
    n, c, h, w = x.shape
    cout = c // (ph * pw)
    out = np.zeros((rois.shape[0], cout, ph, pw))
    mapping = np.zeros(out.shape, np.int32)
    for k, roi in enumerate(rois):
        b = int(roi[0])
        for (i, j), (h0, h1, w0, w1) in pool_bins(roi, scale, ph, pw, h, w, False).items():
            for co in range(cout):
                cin = (co * ph + i) * pw + j
                win = x[b, cin, h0:h1, w0:w1]
                out[k, co, i, j] = win.mean() if win.size else 0.0
                mapping[k, co, i, j] = cin
    return out, mapping


def ps_roi_pool_backward(grad, rois, scale, ph, pw, shape):
    """The adjoint of ps_roi_pool (above): each bin's gradient spread evenly over its
    window of its own channel."""
    n, c, h, w = shape
    cout = c // (ph * pw)
    gin = np.zeros(shape)
    for k, roi in enumerate(rois):
        b = int(roi[0])
        for (i, j), (h0, h1, w0, w1) in pool_bins(roi, scale, ph, pw, h, w, False).items():
            if h1 > h0 and w1 > w0:
                for co in range(cout):
                    cin = (co * ph + i) * pw + j
                    gin[b, cin, h0:h1, w0:w1] += grad[k, co, i, j] / ((h1 - h0) * (w1 - w0))
    return gin


def iou_suppress(boxes, scores, threshold):
    """Greedy NMS: indices kept, by decreasing score (ties: the lower index first); a box
    is dropped when its IoU with a kept one is above the threshold."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    keep, dropped = [], set()
    for a, i in enumerate(order):
        if i in dropped:
            continue
        keep.append(i)
        for j in order[a + 1:]:
            if j in dropped:
                continue
            iw = max(0.0, min(boxes[i, 2], boxes[j, 2]) - max(boxes[i, 0], boxes[j, 0]))
            ih = max(0.0, min(boxes[i, 3], boxes[j, 3]) - max(boxes[i, 1], boxes[j, 1]))
            inter = iw * ih
            with np.errstate(invalid="ignore", divide="ignore"):
                if inter / (area[i] + area[j] - inter) > threshold:
                    dropped.add(j)
    return np.array(keep, np.int64)


def _deform_sample(plane, y, x):
    """Bilinear sample of one plane at (y, x), zero outside (deformable convolution)."""
    h, w = plane.shape
    if y <= -1 or y >= h or x <= -1 or x >= w:
        return 0.0
    y0, x0 = math.floor(y), math.floor(x)
    ly, lx = y - y0, x - x0
    val = 0.0
    for r, q, wt in ((y0, x0, (1 - ly) * (1 - lx)), (y0, x0 + 1, (1 - ly) * lx),
                     (y0 + 1, x0, ly * (1 - lx)), (y0 + 1, x0 + 1, ly * lx)):
        if 0 <= r < h and 0 <= q < w:
            val += wt * plane[r, q]
    return val


def deform_conv2d(x, weight, offset, mask, bias, a):
    """Deformable convolution v2 (mask used when `use_mask`): each kernel tap (ki, kj) of
    output (oy, ox) samples the input at (oy*s - p + ki*d + dy, ox*s - p + kj*d + dx), the
    offsets (dy, dx) of its offset group, times the tap's mask."""
    n, c, h, w = x.shape
    oc, cg, kh, kw = weight.shape
    sh, sw, ph_, pw_ = a["stride_h"], a["stride_w"], a["pad_h"], a["pad_w"]
    dh, dw, groups, ogroups = a["dilation_h"], a["dilation_w"], a["groups"], a["offset_groups"]
    oh = (h + 2 * ph_ - (dh * (kh - 1) + 1)) // sh + 1
    ow = (w + 2 * pw_ - (dw * (kw - 1) + 1)) // sw + 1
    cols = np.zeros((n, c, kh, kw, oh, ow))
    per_og = c // ogroups
    for b in range(n):
        for ch in range(c):
            g = ch // per_og
            for ki in range(kh):
                for kj in range(kw):
                    t = ki * kw + kj
                    for oy in range(oh):
                        for ox in range(ow):
                            dy = offset[b, g * 2 * kh * kw + 2 * t, oy, ox]
                            dx = offset[b, g * 2 * kh * kw + 2 * t + 1, oy, ox]
                            m = mask[b, g * kh * kw + t, oy, ox] if a["use_mask"] else 1.0
                            y = oy * sh - ph_ + ki * dh + dy
                            xx = ox * sw - pw_ + kj * dw + dx
                            cols[b, ch, ki, kj, oy, ox] = m * _deform_sample(x[b, ch], y, xx)
    out = np.zeros((n, oc, oh, ow))
    per_g_out = oc // groups
    for o in range(oc):
        g = o // per_g_out
        chans = cols[:, g * cg:(g + 1) * cg]
        out[:, o] = np.einsum("nckl...,ckl->n...", chans, weight[o])
    return out + bias[None, :, None, None]
