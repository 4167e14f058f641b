"""The initializers (weights) and nodes of an ONNX file, read with a small protobuf wire reader.

An ONNX file is one protobuf message (``ModelProto``). dreamer needs only a few of its fields
to take a BERT encoder's weights out of it: the graph's nodes (op type, inputs, outputs) and
its initializers (name, data type, dimensions, raw bytes). Reading those takes ~60 lines of
the wire format, instead of a dependency on ``onnx`` (and ``protobuf``) or on ``onnxruntime``,
whose import alone is slow. Tensors are returned as views of the file's bytes.

Field numbers are those of onnx.proto (ONNX IR version 3 and later, unchanged since).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# onnx.proto field numbers
_MODEL_GRAPH = 7
_GRAPH_NODE, _GRAPH_INITIALIZER = 1, 5
_NODE_INPUT, _NODE_OUTPUT, _NODE_OP_TYPE = 1, 2, 4
_TENSOR_DIMS, _TENSOR_DATA_TYPE, _TENSOR_NAME, _TENSOR_RAW = 1, 2, 8, 9
_TENSOR_DATA_LOCATION = 14
# TensorProto.DataType -> numpy dtype name
_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 6: "int32", 7: "int64", 9: "bool", 10: "float16"}


class OnnxFormatError(ValueError):
    """The bytes are not an ONNX model this reader understands."""


@dataclass(frozen=True)
class Node:
    """One operator of the graph."""

    op: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class Graph:
    """What a forward pass needs of an ONNX model: its nodes, in order, and its weights."""

    nodes: list[Node]
    tensors: dict[str, np.ndarray]


def _varint(data: memoryview, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise OnnxFormatError("truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _fields(data: memoryview, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """(field number, wire type, value or start, end) of each field in data[start:end]."""
    at = start
    while at < end:
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
            yield number, wire, value, at
        elif wire == 1:
            yield number, wire, at, at + 8
            at += 8
        elif wire == 2:
            size, at = _varint(data, at)
            yield number, wire, at, at + size
            at += size
        elif wire == 5:
            yield number, wire, at, at + 4
            at += 4
        else:
            raise OnnxFormatError(f"unsupported wire type {wire}")
    if at != end:
        raise OnnxFormatError("a field runs past its message")


def _text(data: memoryview, start: int, end: int) -> str:
    return bytes(data[start:end]).decode("utf-8")


def _node(data: memoryview, start: int, end: int) -> Node:
    inputs: list[str] = []
    outputs: list[str] = []
    op = ""
    for number, wire, first, last in _fields(data, start, end):
        if wire != 2:
            continue
        if number == _NODE_INPUT:
            inputs.append(_text(data, first, last))
        elif number == _NODE_OUTPUT:
            outputs.append(_text(data, first, last))
        elif number == _NODE_OP_TYPE:
            op = _text(data, first, last)
    return Node(op, tuple(inputs), tuple(outputs))


def _tensor(data: memoryview, start: int, end: int) -> tuple[str, np.ndarray]:
    import numpy as np

    dims: list[int] = []
    name, dtype, raw = "", 0, None
    for number, wire, first, last in _fields(data, start, end):
        if number == _TENSOR_DIMS and wire == 0:
            dims.append(first)
        elif number == _TENSOR_DIMS and wire == 2:  # packed
            at = first
            while at < last:
                dim, at = _varint(data, at)
                dims.append(dim)
        elif number == _TENSOR_DATA_TYPE:
            dtype = first
        elif number == _TENSOR_NAME:
            name = _text(data, first, last)
        elif number == _TENSOR_RAW:
            raw = (first, last)
        elif number == _TENSOR_DATA_LOCATION and first != 0:
            raise OnnxFormatError(f"tensor {name!r} is stored outside the file")
    if dtype not in _DTYPES:
        raise OnnxFormatError(f"tensor {name!r} has unsupported data type {dtype}")
    if raw is None:
        raise OnnxFormatError(f"tensor {name!r} is not stored as raw bytes")
    array = np.frombuffer(data[raw[0] : raw[1]], dtype=np.dtype(_DTYPES[dtype]).newbyteorder("<"))
    return name, array.reshape(dims)


def read_graph(content: bytes) -> Graph:
    """The nodes and initializers of the main graph of an ONNX model's bytes."""
    data = memoryview(content)
    graph = next(
        (
            (first, last)
            for number, wire, first, last in _fields(data, 0, len(data))
            if number == _MODEL_GRAPH and wire == 2
        ),
        None,
    )
    if graph is None:
        raise OnnxFormatError("no graph in the model")
    nodes: list[Node] = []
    tensors: dict[str, np.ndarray] = {}
    for number, wire, first, last in _fields(data, *graph):
        if wire != 2:
            continue
        if number == _GRAPH_NODE:
            nodes.append(_node(data, first, last))
        elif number == _GRAPH_INITIALIZER:
            name, array = _tensor(data, first, last)
            tensors[name] = array
    return Graph(nodes, tensors)
