"""The C++ rules, in code order. Each mirrors the Python rule of the same code."""
from __future__ import annotations

from checkers.lint.cpp.enforce import CppEnforceMessage
from checkers.lint.cpp.input_writes import CppInputMutation
from checkers.lint.cpp.notes import CppAnalysisStopped
from checkers.lint.cpp.opmaker import CppMissingOpComment, CppSlotNaming
from checkers.lint.cpp.registration import CppFloatDoubleKernel
from checkers.lint.cpp.unparseable import CppUnparseable

# CppUnparseable (OPK000) and CppAnalysisStopped (OPK009) are reported by the engine; they are
# listed for the catalog and the examples
CPP_RULES = [CppInputMutation, CppEnforceMessage, CppFloatDoubleKernel, CppSlotNaming,
             CppMissingOpComment]
CPP_CATALOG = sorted([CppUnparseable, *CPP_RULES, CppAnalysisStopped], key=lambda r: r.code)
