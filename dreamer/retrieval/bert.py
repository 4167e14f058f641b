"""A BERT encoder's forward pass in numpy, from weights taken once out of an ONNX file.

all-MiniLM-L6-v2 is a 6-layer BERT (384 wide, 12 heads, 1,536 in the feed-forward layer).
Its int8 ONNX export stores each weight matrix as int8 with a float scale per output column
(per row for the embedding tables), turned into float32 by ``Cast`` and ``Mul`` before every
``MatMul``; activations stay float32. So the same arithmetic in numpy (float32 matrices, exact
GELU, LayerNorm, softmax attention) gives onnxruntime's output to rounding (cosine ≥ 0.9999,
checked by ``tests/retrieval/test_minilm.py``), without importing onnxruntime (slow to import).

The weights are read from the ONNX file once (``onnx_weights``), dequantized, and written to
the user's cache folder as two ``.npy`` files (the float32 matrices, 42 MB, and the int8 word
table with its scales, 12 MB), which every later process memory-maps: a fresh ``dream search``
reads the pages it touches from the page cache instead of parsing 23 MB of protobuf. A cache
that cannot be written (a read-only home) only costs each process the parse.

The float32 matrices are kept in the dtype the forward pass multiplies in: a query reads all
42 MB of them, which bounds its time (float16 would halve the bytes but cost more to widen
than it saves, and numpy has no fast float16 product). They are mapped with their page
tables filled in one call where Linux allows (``MAP_POPULATE``), instead of a page fault per
4 KB during the first query.

Each layer's query, key and value matrices are kept side by side (384 x 1,152), so one matrix
product makes all three: fewer, larger products suit BLAS better. The cache folder's name
carries the layout's version (``CACHE_FORMAT``), so a cache of another layout is never read.
"""

from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from dreamer.retrieval.onnx_weights import Graph

HIDDEN = 384
HEADS = 12
INTERMEDIATE = 1536
LAYERS = 6
POSITIONS = 512
VOCAB = 30522
LN_EPSILON = 1e-12
FEED_FORWARD_ROWS = 256  # tokens whose feed-forward activations are computed together
# The parts of one layer, as the ONNX export names their biases ("...layer.N.<part>.bias").
_LINEAR = {
    "attention.self.query": "query",
    "attention.self.key": "key",
    "attention.self.value": "value",
    "attention.output.dense": "attention_out",
    "intermediate.dense": "intermediate",
    "output.dense": "output",
}
_QKV = ("query", "key", "value")  # kept side by side: one product makes all three
_PREFIX = "inner."  # the export wraps the Hugging Face model as `inner`


def _layout() -> list[tuple[str, tuple[int, ...]]]:
    """Every float tensor of the cache file, in file order, with its shape."""
    shapes: list[tuple[str, tuple[int, ...]]] = [
        ("position", (POSITIONS, HIDDEN)),
        ("token_type", (2, HIDDEN)),
        ("embeddings.ln.weight", (HIDDEN,)),
        ("embeddings.ln.bias", (HIDDEN,)),
        ("word_scale", (VOCAB,)),
    ]
    for layer in range(LAYERS):
        shapes += [
            (f"{layer}.qkv.weight", (HIDDEN, 3 * HIDDEN)),
            (f"{layer}.qkv.bias", (3 * HIDDEN,)),
        ]
        for part in _LINEAR.values():
            if part in _QKV:
                continue
            rows = INTERMEDIATE if part == "output" else HIDDEN
            columns = INTERMEDIATE if part == "intermediate" else HIDDEN
            shapes += [
                (f"{layer}.{part}.weight", (rows, columns)),
                (f"{layer}.{part}.bias", (columns,)),
            ]
        for norm in ("attention_ln", "output_ln"):
            shapes += [(f"{layer}.{norm}.weight", (HIDDEN,)), (f"{layer}.{norm}.bias", (HIDDEN,))]
    return shapes


LAYOUT = _layout()


@dataclass(eq=False)
class Weights:
    """The encoder's parameters: float32 arrays by name, and the int8 word table."""

    floats: dict[str, np.ndarray]
    words: np.ndarray  # (VOCAB, HIDDEN) int8; row i times floats["word_scale"][i]


def from_graph(graph: Graph) -> Weights:
    """The encoder's weights out of the ONNX graph of all-MiniLM-L6-v2 (int8 export)."""
    import numpy as np

    from dreamer.retrieval.onnx_weights import OnnxFormatError

    tensors = graph.tensors
    made: dict[str, np.ndarray] = {}
    cast = {
        n.outputs[0]: n.inputs[0] for n in graph.nodes if n.op == "Cast" and n.inputs[0] in tensors
    }
    for node in graph.nodes:  # Mul(Cast(int8), scale): a dequantized weight
        if node.op == "Mul" and node.inputs[0] in cast and node.inputs[1] in tensors:
            quantized = tensors[cast[node.inputs[0]]]
            made[node.outputs[0]] = quantized.astype(np.float32) * tensors[node.inputs[1]]

    def value(name: str) -> np.ndarray:
        if name in made:
            return made[name]
        if name in tensors:
            return np.asarray(tensors[name], dtype=np.float32)
        raise OnnxFormatError(f"the model has no tensor {name!r}")

    floats: dict[str, np.ndarray] = {
        "position": value(f"{_PREFIX}embeddings.position_embeddings.weight"),
        "token_type": value(f"{_PREFIX}embeddings.token_type_embeddings.weight"),
        "embeddings.ln.weight": value(f"{_PREFIX}embeddings.LayerNorm.weight"),
        "embeddings.ln.bias": value(f"{_PREFIX}embeddings.LayerNorm.bias"),
    }
    word_q = f"{_PREFIX}embeddings.word_embeddings.weight_q"
    word_scale = f"{_PREFIX}embeddings.word_embeddings.weight_scale"
    if word_q not in tensors or word_scale not in tensors:
        raise OnnxFormatError("the model has no int8 word embedding table")
    words = np.asarray(tensors[word_q], dtype=np.int8)
    floats["word_scale"] = np.asarray(tensors[word_scale], dtype=np.float32).reshape(-1)
    # Each MatMul's weight is named by the bias added to its output ("...layer.3.output.dense").
    adds = {n.inputs[0]: n.inputs[1] for n in graph.nodes if n.op == "Add" and len(n.inputs) == 2}
    for node in graph.nodes:
        if node.op != "MatMul" or node.inputs[1] not in made:
            continue
        bias = adds.get(node.outputs[0], "")
        layer, part = _layer_part(bias)
        if part in _LINEAR:
            floats[f"{layer}.{_LINEAR[part]}.weight"] = made[node.inputs[1]]
            floats[f"{layer}.{_LINEAR[part]}.bias"] = value(bias)
    for layer in range(LAYERS):
        parts = [f"{layer}.{part}" for part in _QKV if f"{layer}.{part}.weight" in floats]
        if len(parts) == len(_QKV):
            floats[f"{layer}.qkv.weight"] = np.concatenate(
                [floats.pop(f"{part}.weight") for part in parts], axis=1
            )
            floats[f"{layer}.qkv.bias"] = np.concatenate(
                [floats.pop(f"{part}.bias") for part in parts]
            )
        base = f"{_PREFIX}encoder.layer.{layer}"
        for norm, name in (
            ("attention_ln", "attention.output.LayerNorm"),
            ("output_ln", "output.LayerNorm"),
        ):
            floats[f"{layer}.{norm}.weight"] = value(f"{base}.{name}.weight")
            floats[f"{layer}.{norm}.bias"] = value(f"{base}.{name}.bias")
    for name, shape in LAYOUT:
        if name not in floats or floats[name].shape != shape:
            found = floats[name].shape if name in floats else "nothing"
            raise OnnxFormatError(f"the model's {name} is {found}, not {shape}")
    if words.shape != (VOCAB, HIDDEN):
        raise OnnxFormatError(f"the model's word table is {words.shape}, not {(VOCAB, HIDDEN)}")
    return Weights(floats, words)


def _layer_part(bias: str) -> tuple[int, str]:
    """(layer, part) of a bias name such as ``inner.encoder.layer.3.output.dense.bias``."""
    head = f"{_PREFIX}encoder.layer."
    if not (bias.startswith(head) and bias.endswith(".bias")):
        return -1, ""
    layer, _, part = bias[len(head) : -len(".bias")].partition(".")
    return (int(layer), part) if layer.isdigit() else (-1, "")


CACHE_FORMAT = 2  # the layout's version: a cache folder of another layout is never read


def _cache_files(folder: Path) -> tuple[Path, Path]:
    return folder / "floats.npy", folder / "words.npy"


def save(weights: Weights, folder: Path) -> None:
    """Write the weights to ``folder`` for ``load``: each file complete or absent."""
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    flat = np.concatenate([weights.floats[name].reshape(-1) for name, _ in LAYOUT])
    floats, words = _cache_files(folder)
    # The float file is written last: it is what ``load`` looks for first.
    for path, array in ((words, weights.words), (floats, flat.astype(np.float32))):
        temp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            with temp.open("wb") as handle:
                np.save(handle, array, allow_pickle=False)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, path)
        finally:
            temp.unlink(missing_ok=True)


def load(folder: Path) -> Weights | None:
    """The weights ``save`` wrote to ``folder``, memory-mapped; None when absent or damaged."""
    import numpy as np

    floats_path, words_path = _cache_files(folder)
    try:
        # Every forward pass reads all the float weights: mapped up front, they cost a fresh
        # process one call instead of a page fault per 4 KB on its first query.
        flat = _mapped(floats_path, populate=True)
        words = np.load(words_path, mmap_mode="r", allow_pickle=False)  # a few rows a query
    except (OSError, ValueError):
        return None
    total = sum(math.prod(shape) for _, shape in LAYOUT)
    if flat.shape != (total,) or flat.dtype != np.float32:
        return None
    if words.shape != (VOCAB, HIDDEN) or words.dtype != np.int8:
        return None
    floats: dict[str, np.ndarray] = {}
    at = 0
    for name, shape in LAYOUT:
        size = math.prod(shape)
        floats[name] = flat[at : at + size].reshape(shape)
        at += size
    return Weights(floats, words)


def _mapped(path: Path, populate: bool) -> np.ndarray:
    """The array of the ``.npy`` file at ``path``, memory-mapped read-only; with ``populate``,
    its pages are mapped in one call (Linux ``MAP_POPULATE``), elsewhere as ``np.load`` maps."""
    import mmap

    import numpy as np
    from numpy.lib import format as npy

    flag = getattr(mmap, "MAP_POPULATE", 0)
    if not (populate and flag):
        return np.load(path, mmap_mode="r", allow_pickle=False)
    with path.open("rb") as handle:
        version = npy.read_magic(handle)
        if version == (1, 0):
            shape, fortran, dtype = npy.read_array_header_1_0(handle)
        elif version == (2, 0):
            shape, fortran, dtype = npy.read_array_header_2_0(handle)
        else:
            raise ValueError(f"{path} has .npy version {version}")
        offset, count = handle.tell(), math.prod(shape)
        if fortran or dtype.hasobject:
            raise ValueError(f"{path} is not a plain array")
        if offset + count * dtype.itemsize > os.fstat(handle.fileno()).st_size:
            raise ValueError(f"{path} is cut short")
        mapped = mmap.mmap(handle.fileno(), 0, flags=mmap.MAP_SHARED | flag, prot=mmap.PROT_READ)
    return np.frombuffer(mapped, dtype=dtype, count=count, offset=offset).reshape(shape)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    import numpy as np

    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(variance + LN_EPSILON) * weight + bias


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact GELU, x * (1 + erf(x / sqrt 2)) / 2, computed in place in ``x`` (float32).

    erf is Abramowitz and Stegun 7.1.26 (absolute error under 1.5e-7): 1 - p(t) exp(-u^2)
    for u >= 0, odd. Three temporaries of x's size, each operation in place. Past |u| = 4 the
    product p(t) exp(-u^2) is below float32's resolution next to 1, so u^2 is capped at 16:
    exp(-u^2) of a larger u is a subnormal number, and arithmetic on subnormals runs many
    times slower on common CPUs without changing a single result.
    """
    import numpy as np

    u = x * np.float32(1.0 / math.sqrt(2.0))
    np.abs(u, out=u)
    t = u * np.float32(0.3275911)
    t += 1.0
    np.reciprocal(t, out=t)
    tail = t * np.float32(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        tail += coefficient
        tail *= t
    np.minimum(u, 4.0, out=u)
    np.square(u, out=u)
    np.negative(u, out=u)
    np.exp(u, out=u)
    tail *= u  # 1 - erf(|x| / sqrt 2)
    np.subtract(1.0, tail, out=tail)
    np.copysign(tail, x, out=tail)  # erf(x / sqrt 2)
    tail += 1.0
    tail *= 0.5
    x *= tail
    return x


def _feed_forward(
    x: np.ndarray,
    inner: np.ndarray,
    inner_bias: np.ndarray,
    outer: np.ndarray,
    outer_bias: np.ndarray,
) -> np.ndarray:
    """x + GELU(x @ inner + inner_bias) @ outer + outer_bias, a block of
    ``FEED_FORWARD_ROWS`` tokens at a time: the 1,536-wide activations of a block stay in
    the CPU's cache through the GELU's passes, and never exist for the whole batch at once."""
    import numpy as np

    out = np.empty_like(x)
    for start in range(0, len(x), FEED_FORWARD_ROWS):
        block = x[start : start + FEED_FORWARD_ROWS]
        hidden = block @ inner
        hidden += inner_bias
        np.matmul(_gelu(hidden), outer, out=out[start : start + FEED_FORWARD_ROWS])
    out += outer_bias
    out += x
    return out


def encode(weights: Weights, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The last hidden states (batch, tokens, HIDDEN) of token ids padded to one width, where
    ``mask`` is 1 on real tokens (token type 0 throughout, positions from 0)."""
    import numpy as np

    w = weights.floats
    batch, width = ids.shape
    x = weights.words[ids].astype(np.float32) * w["word_scale"][ids][..., None]
    x += w["position"][:width] + w["token_type"][0]
    x = _layer_norm(x, w["embeddings.ln.weight"], w["embeddings.ln.bias"])
    # Padding keys get no attention; a softmax over -inf alone never happens (CLS is real).
    blocked = np.where(mask[:, None, None, :] > 0, 0.0, -np.inf).astype(np.float32)
    size = HIDDEN // HEADS
    scale = np.float32(1.0 / math.sqrt(size))
    for layer in range(LAYERS):
        flat = x.reshape(batch * width, HIDDEN)

        def weight(part: str, layer: int = layer) -> np.ndarray:
            return w[f"{layer}.{part}.weight"]

        def bias(part: str, layer: int = layer) -> np.ndarray:
            return w[f"{layer}.{part}.bias"]

        # Query, key and value in one product, split into heads: (3, batch, heads, width, size).
        projected = flat @ weight("qkv")
        projected += bias("qkv")
        query, key, value = projected.reshape(batch, width, 3, HEADS, size).transpose(2, 0, 3, 1, 4)
        scores = query @ key.transpose(0, 1, 3, 2)
        scores *= scale
        scores += blocked
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ value).transpose(0, 2, 1, 3).reshape(batch * width, HIDDEN)
        del projected, query, key, value, scores
        attended = context @ weight("attention_out")
        attended += bias("attention_out")
        attended += flat
        x = _layer_norm(attended, weight("attention_ln"), bias("attention_ln"))
        x = _layer_norm(
            _feed_forward(
                x, weight("intermediate"), bias("intermediate"), weight("output"), bias("output")
            ),
            weight("output_ln"),
            bias("output_ln"),
        ).reshape(batch, width, HIDDEN)
    return x
