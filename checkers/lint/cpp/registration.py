"""OPK003 missing-float-double-kernel, for C++ kernel registrations."""
from __future__ import annotations

from checkers.lint.cpp.base import CppRule, Report, cpp_example
from checkers.lint.cpp.parse import macro_calls, squeeze, walk

# a scalar type as written in a registration -> its dtype (namespaces dropped)
DTYPES = {"float": "float32", "double": "float64", "float16": "float16", "bfloat16": "bfloat16",
          "int": "int32", "int32_t": "int32", "int64_t": "int64", "int16_t": "int16",
          "int8_t": "int8", "uint8_t": "uint8", "bool": "bool", "size_t": "uint64",
          "complex64": "complex64", "complex128": "complex128", "complex<float>": "complex64",
          "complex<double>": "complex128", "float8_e4m3fn": "float8", "float8_e5m2": "float8"}
NEEDED = ("float32", "float64")
# fluid: the kernel classes after the op type; the place is fixed by the macro
FLUID = {"REGISTER_OP_CPU_KERNEL": "CPU", "REGISTER_OP_CUDA_KERNEL": "GPU"}
# (dtype, kernel) pairs after the op type
FUNCTOR = {"REGISTER_OP_CPU_KERNEL_FUNCTOR": "CPU", "REGISTER_OP_CUDA_KERNEL_FUNCTOR": "GPU"}
# phi: (name, backend, layout, kernel, dtype...)
PHI = ("PD_REGISTER_KERNEL", "PD_REGISTER_STRUCT_KERNEL")
PHI_BACKENDS = {"CPU": "CPU", "GPU": "GPU"}
# REGISTER_OP_KERNEL(op, library, place, kernels...): only the plain CPU/CUDA libraries
PLAIN_LIBRARIES = {"CPU": "CPU", "CUDA": "GPU", "PLAIN": None}
PLACES = {"CPUPlace": "CPU", "CUDAPlace": "GPU"}
_MACROS = frozenset([*FLUID, *FUNCTOR, *PHI, "REGISTER_OP_KERNEL"])


def dtype_of(name: str) -> str | None:
    """`paddle::platform::float16` -> 'float16'; `T` -> None."""
    last = name
    if "<" not in name:
        last = name.rsplit("::", 1)[-1]
    else:  # complex<float>, platform::complex<double>
        head, _, rest = name.partition("<")
        last = head.rsplit("::", 1)[-1] + "<" + rest
    return DTYPES.get(last)


def kernel_dtype(node) -> str | None:
    """The element type of a kernel class as written: the first template argument that is a
    scalar type, searched outermost first (`Kernel<CPUDeviceContext, float>` -> float32,
    `ActivationKernel<CPU, ReluFunctor<float>>` -> float32); None when there is none."""
    for sub in walk(node):
        if sub.type != "template_argument_list":
            continue
        for arg in sub.named_children:
            dtype = dtype_of(squeeze(arg))
            if dtype is not None:
                return dtype
    return None


class CppFloatDoubleKernel(CppRule):
    code = "OPK003"
    name = "missing-float-double-kernel"
    summary = ("an op registers CPU or GPU kernels for `float` but not `double`, or for "
               "`double` but not `float`")
    triggers = (b"REGISTER_OP_", b"PD_REGISTER_")
    rationale = (
        "Paddle's gradient checks run in double and models train in float: an op (and its grad "
        "op, a registration of its own) that registers floating-point kernels on a place needs "
        "both. Read from `REGISTER_OP_CPU_KERNEL`, `REGISTER_OP_CUDA_KERNEL`, "
        "`REGISTER_OP_CPU_KERNEL_FUNCTOR`, `REGISTER_OP_CUDA_KERNEL_FUNCTOR`, "
        "`REGISTER_OP_KERNEL` with the plain CPU/CUDA library, `PD_REGISTER_KERNEL` and "
        "`PD_REGISTER_STRUCT_KERNEL` on the CPU and GPU backends; registrations of one op on "
        "one place are pooled over the file. An op with only integer, bool or complex kernels "
        "is not a float op, nor is one with only low-precision kernels (`float16`, "
        "`bfloat16`: fused cuDNN ops made for them); a kernel class whose element type is not written out (`Kernel<T>`, "
        "a macro argument) makes the op skipped rather than guessed. Library kernels (CUDNN, "
        "MKLDNN/OneDNN), other devices (XPU, NPU, MLU, custom) and macros Paddle layers on "
        "these (`REGISTER_ACTIVATION_CPU_KERNEL`, `PD_REGISTER_ACTIVATION_KERNEL`) are not "
        "judged: their dtype lists live in `#define` bodies, which a parser does not expand."
    )
    VALID = [
        cpp_example(
            'namespace ops = paddle::operators;\n'
            'REGISTER_OP_CPU_KERNEL(\n'
            '    clip, ops::ClipKernel<paddle::platform::CPUDeviceContext, float>,\n'
            '    ops::ClipKernel<paddle::platform::CPUDeviceContext, double>);\n'
            'REGISTER_OP_CUDA_KERNEL(\n'
            '    relu, ops::ActivationKernel<CUDA, ops::ReluFunctor<float>>,\n'
            '    ops::ActivationKernel<CUDA, ops::ReluFunctor<double>>,\n'
            '    ops::ActivationKernel<CUDA, ops::ReluFunctor<plat::float16>>);\n'),
        # integer-only ops are not float ops; library kernels are not judged
        cpp_example(
            'REGISTER_OP_CPU_KERNEL(\n'
            '    shard_index, ops::ShardIndexCPUKernel<int>, ops::ShardIndexCPUKernel<int64_t>);\n'
            'REGISTER_OP_KERNEL(conv2d, MKLDNN, ::paddle::platform::CPUPlace,\n'
            '                   ops::ConvMKLDNNOpKernel<float>);\n'),
        cpp_example(
            'PD_REGISTER_KERNEL(relu, CPU, ALL_LAYOUT, phi::ReluKernel, float, double) {}\n'
            'PD_REGISTER_STRUCT_KERNEL(\n'
            '    seed, CPU, ALL_LAYOUT, ops::CPUSeedKernel, int) {}\n'
            'PD_REGISTER_KERNEL(relu, XPU, ALL_LAYOUT, phi::ReluKernel, float) {}\n',
            path="relu_kernel.cc"),
        # a half-precision-only op is not a float op
        cpp_example('REGISTER_OP_CUDA_KERNEL(resnet_unit, ops::ResNetUnitKernel<plat::float16>);\n',
                    path="resnet_unit_op.cu"),
        # the element type is not written out: skipped, not guessed
        cpp_example('REGISTER_OP_CPU_KERNEL(scale, ops::ScaleKernel<CPU, T>);\n'),
    ]
    INVALID = [
        cpp_example(
            'REGISTER_OP_CPU_KERNEL(\n'
            '    sequence_pool,\n'
            '    ops::SequencePoolKernel<paddle::platform::CPUDeviceContext, float>);\n', line=1),
        cpp_example(
            'REGISTER_OP_CUDA_KERNEL(\n'
            '    relu_grad, ops::ReluGradKernel<plat::CUDADeviceContext, double>);\n', line=1),
        cpp_example(
            'PD_REGISTER_KERNEL(\n'
            '    fill_diagonal, GPU, ALL_LAYOUT, phi::FillDiagonalKernel, float, int64_t) {}\n',
            line=1, path="fill_diagonal_kernel.cu"),
        cpp_example(
            'REGISTER_OPERATOR(reshape, ops::ReshapeOp, ops::ReshapeOpMaker);\n'
            'REGISTER_OP_CPU_KERNEL_FUNCTOR(reshape, float, ops::ReshapeKernel, int,\n'
            '                               ops::ReshapeKernel);\n', line=2),
    ]

    def check(self, cpp):
        seen: dict = {}  # (op, place) -> [dtypes, first call, judged]
        for call in macro_calls(cpp, _MACROS):
            registration = _read(call)
            if registration is None:
                continue
            op, place, dtypes = registration
            entry = seen.setdefault((op, place), [set(), call, True])
            if dtypes is None:
                entry[2] = False
            else:
                entry[0].update(dtypes)
        for (op, place), (dtypes, call, judged) in seen.items():
            if not judged or not dtypes & set(NEEDED):
                continue
            missing = [d for d in NEEDED if d not in dtypes]
            if missing:
                have = ", ".join(sorted(dtypes))
                yield Report(call.node, f"op '{op}' registers {place} kernels for {have} but not "
                                        f"{' and '.join(missing)}")


def _read(call):
    """(op, place, dtypes or None when not all are known), or None when not judged."""
    args = call.args
    if not args:
        return None
    op = squeeze(args[0])
    if not op.replace("_", "").isalnum():
        return None  # the op type is a macro parameter or expression
    if call.name in FLUID:
        return op, FLUID[call.name], _kernel_dtypes(args[1:])
    if call.name in FUNCTOR:
        pairs = args[1:]
        if not pairs or len(pairs) % 2:
            return op, FUNCTOR[call.name], None
        dtypes = [dtype_of(squeeze(a)) for a in pairs[0::2]]
        return op, FUNCTOR[call.name], None if None in dtypes else set(dtypes)
    if call.name == "REGISTER_OP_KERNEL":
        if len(args) < 4:
            return None
        library = squeeze(args[1])
        place = PLACES.get(squeeze(args[2]).rsplit("::", 1)[-1])
        if library not in PLAIN_LIBRARIES or place is None:
            return None
        return op, place, _kernel_dtypes(args[3:])
    # PD_REGISTER_KERNEL / PD_REGISTER_STRUCT_KERNEL
    if len(args) < 5:
        return None
    place = PHI_BACKENDS.get(squeeze(args[1]))
    if place is None:
        return None
    dtypes = [dtype_of(squeeze(a)) for a in args[4:]]
    return op, place, None if None in dtypes else set(dtypes)


def _kernel_dtypes(kernels) -> set | None:
    if not kernels:
        return None
    dtypes = [kernel_dtype(k) for k in kernels]
    return None if None in dtypes else set(dtypes)
