"""The rules, one module each. `ALL_RULES` (the checks) is in code order."""
from __future__ import annotations

from checkers.lint.rules.analysis_stopped import AnalysisStopped
from checkers.lint.rules.empty_enforce_message import EmptyEnforceMessage
from checkers.lint.rules.input_mutation import InputMutation
from checkers.lint.rules.missing_float_double_kernel import MissingFloatDoubleKernel
from checkers.lint.rules.missing_op_comment import MissingOpComment
from checkers.lint.rules.op_file_layout import OpFileLayout
from checkers.lint.rules.output_shares_input import OutputSharesInput
from checkers.lint.rules.slot_naming import SlotNaming
from checkers.lint.rules.syntax_error import SyntaxErrorRule
from checkers.lint.rules.unchecked_kernel_dtype import UncheckedKernelDtype

ALL_RULES = sorted([InputMutation, EmptyEnforceMessage, MissingFloatDoubleKernel, OutputSharesInput,
                    UncheckedKernelDtype, OpFileLayout, SlotNaming, MissingOpComment, AnalysisStopped],
                   key=lambda rule: rule.code)
RULES_BY_CODE = {rule.code: rule for rule in ALL_RULES}
# every code, OPK000 (reported by the engine) included: what the catalog is generated from
CATALOG_RULES = [SyntaxErrorRule, *ALL_RULES]
