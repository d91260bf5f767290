"""Variables and scopes: where the values of a run live."""
from __future__ import annotations

from opkit.framework import errors
from opkit.framework.tensor import LoDTensor, LoDTensorArray, SelectedRows

__all__ = ["Variable", "Scope", "global_scope"]


class Variable:
    """A named slot holding a LoDTensor, SelectedRows, LoDTensorArray or another value."""

    __slots__ = ("name", "_value")

    def __init__(self, name: str = ""):
        self.name = name
        self._value = None

    def get_tensor(self) -> LoDTensor:
        """The LoDTensor held, created empty on first use."""
        if self._value is None:
            self._value = LoDTensor()
        if not isinstance(self._value, LoDTensor):
            raise errors.InvalidArgument("variable '%s' holds %s, not a LoDTensor", self.name,
                                         type(self._value).__name__)
        return self._value

    def get_selected_rows(self) -> SelectedRows:
        if self._value is None:
            self._value = SelectedRows()
        if not isinstance(self._value, SelectedRows):
            raise errors.InvalidArgument("variable '%s' holds %s, not SelectedRows", self.name,
                                         type(self._value).__name__)
        return self._value

    def get_lod_tensor_array(self) -> LoDTensorArray:
        if self._value is None:
            self._value = LoDTensorArray()
        if not isinstance(self._value, LoDTensorArray):
            raise errors.InvalidArgument("variable '%s' holds %s, not a LoDTensorArray",
                                         self.name, type(self._value).__name__)
        return self._value

    def set_value(self, value) -> None:
        self._value = value

    def value(self):
        return self._value

    def is_initialized(self) -> bool:
        v = self._value
        if v is None:
            return False
        check = getattr(v, "is_initialized", None)
        return bool(check()) if check is not None else True

    def is_type(self, cls) -> bool:
        return isinstance(self._value, cls)

    def __repr__(self):
        return f"Variable({self.name!r}, {self._value!r})"


class Scope:
    """A map from names to Variables; lookups fall through to the parent scope."""

    def __init__(self, parent: "Scope | None" = None):
        self.parent = parent
        self._vars: dict[str, Variable] = {}
        self._kids: list[Scope] = []

    def var(self, name: str) -> Variable:
        """The variable `name` of this scope, created here when this scope does not hold it."""
        v = self._vars.get(name)
        if v is None:
            v = Variable(name)
            self._vars[name] = v
        return v

    def find_var(self, name: str) -> Variable | None:
        v = self._vars.get(name)
        if v is not None:  # the common case: a variable of this scope
            return v
        scope = self.parent
        while scope is not None:
            v = scope._vars.get(name)
            if v is not None:
                return v
            scope = scope.parent
        return None

    def find_local_var(self, name: str) -> Variable | None:
        return self._vars.get(name)

    def erase(self, name: str) -> None:
        self._vars.pop(name, None)

    def local_var_names(self) -> list[str]:
        return list(self._vars)

    def new_scope(self) -> "Scope":
        kid = Scope(self)
        self._kids.append(kid)
        return kid

    def kids(self) -> list["Scope"]:
        return list(self._kids)

    def drop_kid(self, kid: "Scope") -> None:
        """Forget the child scope `kid` (and its own children) once its work is done."""
        kid.drop_kids()
        if kid in self._kids:
            self._kids.remove(kid)
        kid.parent = None

    def drop_kids(self) -> None:
        for kid in self._kids:
            kid.drop_kids()
            kid.parent = None
        self._kids.clear()

    def __contains__(self, name: str) -> bool:
        return self.find_var(name) is not None

    def __repr__(self):
        return f"Scope(vars={sorted(self._vars)}, kids={len(self._kids)})"


_GLOBAL = Scope()


def global_scope() -> Scope:
    return _GLOBAL
