"""while: run a sub-block again and again, each time in a new step scope, while Condition."""
import numpy as np

from opkit import OpMaker, OperatorBase, register_operator, enforce, errors

from opkit.framework.device import to_host
from opkit.framework.executor import create_block_variables, run_block
from opkit.framework.tensor import LoDTensor

STEP_SCOPES = "StepScopes"


class WhileOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(vector<LoDTensor>) The variables of the enclosing blocks that "
                       "the sub-block reads.").as_duplicable().as_dispensable()
        self.add_input("Condition", "(LoDTensor, bool) The loop condition, shape [1]. The "
                       "sub-block must update it, or the loop never ends.")
        self.add_output("Out", "(vector<LoDTensor>) The variables of the enclosing blocks "
                        "that the sub-block writes.").as_duplicable()
        self.add_output(STEP_SCOPES, "(StepScopes) The scopes of the steps, one per "
                        "iteration (kept for a backward pass; dropped when is_test).")
        self.add_attr("sub_block", "block", "(Block) The block run at each step.")
        self.add_attr("is_test", "bool", "(bool, default false) Inference mode: each step's "
                      "scope is dropped once the step is done.", default=False)
        self.add_comment(r"""While operator.

Runs the ops of `sub_block` repeatedly, each iteration in a new scope
(a child of the scope the op runs in), as long as Condition holds:
$$\textbf{while } Condition: \quad step\_scope_t = scope.new\_scope();\ 
run(sub\_block, step\_scope_t)$$
Variables declared in the sub-block live in the step scope; reads and writes
of the enclosing blocks' variables (X, Out, Condition) go to the enclosing
scope, so an update of Condition ends the loop. StepScopes holds the list of
step scopes. The op has no kernel (an OperatorBase).
""")


class WhileOp(OperatorBase):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._cache = {}

    def infer_shape(self, ctx):
        enforce(ctx.has_input("Condition"), "Input(Condition) of WhileOp should not be null.")
        if not ctx.is_runtime():
            dims = ctx.get_input_dim("Condition")
            n = int(np.prod(dims)) if all(d >= 0 for d in dims) else -1
            enforce(n in (1, -1), errors.InvalidArgument(
                "Input(Condition) of WhileOp should hold one element, but its shape is %s.",
                list(dims)))

    def _condition(self, scope) -> bool:
        name = self.input("Condition")
        var = scope.find_var(name)
        if var is None or not var.is_initialized():
            raise self.uninitialized_error(name)
        value = var.value()
        enforce(isinstance(value, LoDTensor), errors.InvalidArgument(
            "Input(Condition) variable '%s' of WhileOp should hold a LoDTensor, but it holds "
            "%s.", name, type(value).__name__))
        data = to_host(value.data)
        enforce(data.dtype == np.bool_ and data.size == 1, errors.InvalidArgument(
            "Input(Condition) variable '%s' of WhileOp should be a bool tensor of one "
            "element, but it is %s of shape %s.", name, data.dtype, list(data.shape)))
        return bool(np.asarray(data).reshape(-1)[0])

    def run_impl(self, scope, place, **options):
        block = self.attr("sub_block")
        enforce(block is not None and hasattr(block, "ops"), errors.InvalidArgument(
            "Attr(sub_block) of WhileOp should be a Block, got %r.", block))
        is_test = self.attr("is_test")
        step_scopes = []
        out_name = self.output(STEP_SCOPES)
        if out_name is not None:
            scope.var(out_name).set_value(step_scopes)
        while self._condition(scope):
            step = scope.new_scope()
            # the variables declared in the sub-block are made anew in each step scope
            create_block_variables(block, scope, step, self._cache)
            run_block(block, step, place, self._cache, **options)
            if is_test:
                scope.drop_kid(step)
            else:
                step_scopes.append(step)


register_operator("while", WhileOp, WhileOpMaker)
