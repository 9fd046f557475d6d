"""The schema model: every release's schemas print back unchanged; every syntax form parses to
the right structure; kinds follow torchgen; malformed schemas are refused, naming the text."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from opgov.core.errors import BadInput, SchemaParseError
from opgov.core.schema import (
    Annotation,
    Argument,
    BaseType,
    FunctionSchema,
    ListType,
    OperatorName,
    OptionalType,
    Return,
    SchemaKind,
    Type,
)

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _funcs(folder) -> list[str]:
    with open(folder / "native_functions.yaml", encoding="utf-8") as handle:
        return [entry["func"] for entry in yaml.load(handle, Loader=_LOADER)]


def _by_name(folder) -> dict[str, FunctionSchema]:
    schemas = [FunctionSchema.parse(f) for f in _funcs(folder)]
    return {s.func_name: s for s in schemas}


# --- real data ----------------------------------------------------------------------------


def test_every_schema_of_every_release_round_trips(pytorch_versions, pytorch_release):
    for version in pytorch_versions:
        funcs = _funcs(pytorch_release(version))
        assert funcs, version
        for func in funcs:
            schema = FunctionSchema.parse(func)
            assert str(schema) == func
            # The printer works from the model, not only from the remembered text.
            rebuilt = dataclasses.replace(schema, _text=None)
            assert str(rebuilt) == func
            assert all(str(dataclasses.replace(a, _text=None)) == str(a) for a in schema.arguments)


def test_named_examples_of_each_kind(pytorch_versions, pytorch_release):
    schemas = _by_name(pytorch_release(pytorch_versions[-1]))
    assert schemas["add.Tensor"].kind == "functional"
    assert schemas["add_.Tensor"].kind == "inplace"
    assert schemas["add.out"].kind == "out"
    assert schemas["__iand__.Scalar"].kind == "inplace"
    assert schemas["__and__.Scalar"].kind == "functional"
    assert schemas["_fused_moving_avg_obs_fq_helper"].kind == "mutable"
    assert schemas["_native_batch_norm_legit"].kind == "mutable"
    assert [a.name for a in schemas["_native_batch_norm_legit.out"].arguments.out] == [
        "out", "save_mean", "save_invstd"]


def test_kinds_and_names_agree_with_torchgen(torch_mod, pytorch_versions, pytorch_release):
    from torchgen.model import FunctionSchema as TorchgenSchema

    for func in _funcs(pytorch_release(pytorch_versions[-1])):
        theirs = TorchgenSchema.parse(func)
        ours = FunctionSchema.parse(func)
        assert ours.kind == theirs.kind().name, func
        assert [a.name for a in ours.arguments.out] == [a.name for a in theirs.arguments.out], func
        assert ours.name.base == theirs.name.name.base, func
        assert ours.name.inplace == theirs.name.name.inplace, func
        assert ours.name.overload == theirs.name.overload_name, func


# --- each syntax form ---------------------------------------------------------------------


def _arg(schema: str, name: str) -> Argument:
    return next(a for a in FunctionSchema.parse(schema).arguments if a.name == name)


def test_overload_and_func_name():
    s = FunctionSchema.parse("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert (s.name.name, s.name.overload, s.func_name) == ("add", "Tensor", "add.Tensor")
    plain = FunctionSchema.parse("abs(Tensor self) -> Tensor")
    assert (plain.name.overload, plain.func_name) == ("", "abs")


def test_inplace_and_dunder_names():
    inplace = FunctionSchema.parse("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
    assert inplace.name.inplace and inplace.name.base == "add" and inplace.name.name == "add_"
    dunder = OperatorName.parse("__and__.Scalar")
    assert dunder.dunder and not dunder.inplace and dunder.base == "and"
    augmented = OperatorName.parse("__iand__.Scalar")
    assert augmented.dunder and augmented.inplace and augmented.base == "and"
    assert OperatorName.parse("aten::add.Tensor").namespace == "aten"
    assert str(OperatorName.parse("aten::add.Tensor")) == "aten::add.Tensor"
    assert OperatorName.parse("native_batch_norm_functional").base == "native_batch_norm"


@pytest.mark.parametrize("typed", ["aten::add_.Tensor", "add_.Tensor", "aten.add_.Tensor"])
def test_a_typed_name_is_the_schema_name_model(typed):
    """What a user types and what a func: line says parse into the same OperatorName."""
    from opgov.core.names import parse_op_name

    schema = FunctionSchema.parse("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
    name = parse_op_name(typed)
    assert name == OperatorName.parse("aten::add_.Tensor")
    assert (name.func_name, name.inplace, name.base) == (schema.func_name, True, "add")
    assert parse_op_name("aten.abs.default") == OperatorName("abs", "", "aten")


@pytest.mark.parametrize(
    ("schema", "arg", "type_", "annotation"),
    [
        ("add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", "self", "Tensor", Annotation(("a",), True)),
        ("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]", "self", "Tensor",
         Annotation(("a",), False, ("*",))),
        ("f(Tensor(a)[] tensors) -> Tensor", "tensors", "Tensor[]", Annotation(("a",))),
        ("f(Tensor self, *, Tensor(a!)[] out) -> ()", "out", "Tensor[]", Annotation(("a",), True)),
        ("f(Tensor(b|c) self) -> Tensor", "self", "Tensor", Annotation(("b", "c"))),
        ("f(Tensor(a!)? self) -> Tensor", "self", "Tensor?", Annotation(("a",), True)),
    ],
)
def test_alias_annotations(schema, arg, type_, annotation):
    a = _arg(schema, arg)
    assert str(a.type) == type_
    assert a.annotation == annotation
    assert str(FunctionSchema.parse(schema)) == schema


def test_wildcard_and_write_flags():
    chunk = _arg("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]", "self")
    assert chunk.annotation.is_wildcard_after and not chunk.is_write
    assert str(chunk.annotation) == "a -> *"
    assert Annotation.parse("a") .after == ("a",)


@pytest.mark.parametrize(
    ("type_text", "expected"),
    [
        ("int?", OptionalType(BaseType("int"))),
        ("int[2]", ListType(BaseType("int"), 2)),
        ("SymInt[]", ListType(BaseType("SymInt"))),
        ("Tensor?[]", ListType(OptionalType(BaseType("Tensor")))),
        ("Dimname[1]", ListType(BaseType("Dimname"), 1)),
        ("int[]?", OptionalType(ListType(BaseType("int")))),
        ("SymInt[1]?", OptionalType(ListType(BaseType("SymInt"), 1))),
    ],
)
def test_optional_and_list_types(type_text, expected):
    parsed = Type.parse(type_text)
    assert parsed == expected
    assert str(parsed) == type_text
    schema = f"f(Tensor self, {type_text} x) -> Tensor"
    assert str(FunctionSchema.parse(schema)) == schema


def test_fixed_list_size():
    assert Type.parse("int[2]").list_size == 2
    assert Type.parse("int[1]?").list_size == 1
    assert Type.parse("int[]").list_size is None


@pytest.mark.parametrize(
    "default",
    ["[0, 0]", "None", '"mean"', "-1", "1e-05", "Mean", "contiguous_format", "long", "[]", "[-2,-1]", "True",
     "0.3333333333333333", "'fro'", r'"\"\'\\"'],
)
def test_defaults_are_kept_as_written(default):
    schema = f"f(Tensor self, int[2] x={default}) -> Tensor"
    parsed = FunctionSchema.parse(schema)
    assert parsed.arguments[1].default == default
    assert str(parsed) == schema


def test_defaults_may_contain_separators_and_brackets():
    schema = """f(Tensor self, str a="x, y", str b='[', int[2] c=[1, 2], *, str d=")") -> Tensor"""
    parsed = FunctionSchema.parse(schema)
    assert [a.default for a in parsed.arguments] == [None, '"x, y"', "'['", "[1, 2]", '")"']
    assert str(parsed) == schema


def test_argument_fields():
    s = FunctionSchema.parse("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    self_, other, alpha, out = s.arguments
    assert (self_.name, str(self_.type), self_.default, self_.annotation, self_.kwarg_only, self_.is_out) == (
        "self", "Tensor", None, None, False, False)
    assert (alpha.name, str(alpha.type), alpha.default, alpha.kwarg_only, alpha.is_out) == (
        "alpha", "Scalar", "1", True, False)
    assert (out.name, out.type_text, out.kwarg_only, out.is_out, out.is_write) == (
        "out", "Tensor(a!)", True, True, True)
    assert [a.name for a in s.arguments.positional] == ["self", "other"]
    assert [a.name for a in s.arguments.kwarg_only] == ["alpha"]
    assert [a.name for a in s.arguments.out] == ["out"]


def test_positional_write_is_not_out():
    s = FunctionSchema.parse("_cummax_helper(Tensor self, Tensor(a!) values, Tensor(b!) indices, int dim) -> ()")
    assert s.arguments.out == ()
    assert s.kind == "mutable"
    assert s.returns == ()


def test_kwarg_only_star():
    s = FunctionSchema.parse("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor")
    assert [a.kwarg_only for a in s.arguments] == [False, True]
    assert str(s.arguments) == "Tensor self, *, ScalarType? dtype=None"


def test_named_and_multiple_returns():
    s = FunctionSchema.parse("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
    assert [(r.name, str(r.type)) for r in s.returns] == [("values", "Tensor"), ("indices", "Tensor")]
    assert Return.parse("Tensor(a!) out").annotation == Annotation(("a",), True)
    assert FunctionSchema.parse("f(Tensor self) -> (Tensor, Tensor)").returns == (
        Return(BaseType("Tensor")), Return(BaseType("Tensor")))
    assert FunctionSchema.parse("f(Tensor self) -> ()").returns == ()


def test_out_arguments_may_precede_keyword_arguments():
    """PyTorch accepts (and its FC check judges) an out argument before a keyword argument."""
    s = FunctionSchema.parse("any(Tensor self, *, int a, Tensor(d!) d, int b=1, Tensor(a!) out) -> Tensor(a!)")
    assert [a.name for a in s.arguments.out] == ["d", "out"]
    assert [a.name for a in s.arguments.kwarg_only] == ["a", "b"]


@pytest.mark.parametrize(
    ("schema", "kind"),
    [
        ("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", SchemaKind.functional),
        ("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", SchemaKind.inplace),
        ("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)", SchemaKind.out),
        ("__iand__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", SchemaKind.inplace),
        ("f(Tensor self, Tensor(a!) running_mean) -> Tensor", SchemaKind.mutable),
        ("f(Tensor(a!) self, Tensor other) -> ()", SchemaKind.functional),  # writes self, not in-place by name
        ("f.out(Tensor self, *, Tensor(a!) out, Tensor(b!) _scratch_ws) -> Tensor(a!)", SchemaKind.scratch),
    ],
)
def test_kinds(schema, kind):
    parsed = FunctionSchema.parse(schema)
    assert parsed.kind == kind
    assert parsed.kind == kind.value  # compares as a plain string too


# --- malformed schemas --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ("", "expected 'name(arguments) -> returns'"),
        ("add(Tensor self)", "expected 'name(arguments) -> returns'"),
        ("add(Tensr self) -> Tensor", "unknown type 'Tensr'"),
        ("add(Tensor self, int) -> Tensor", "is not 'Type name'"),
        ("add(Tensor(A!) self) -> Tensor", "is not an alias annotation"),
        ("add(Tensor self, *, *, int a) -> Tensor", "'*' may appear only once"),
        ("add(Tensor self, *) -> Tensor", "'*' must be followed"),
        ("add(Tensor self, int a=) -> Tensor", "is not a literal"),
        ("add(Tensor self, int[2 a) -> Tensor", "unbalanced '['"),
        ("add.default(Tensor self) -> Tensor", "'default' is not a legal overload name"),
        ("add.__x(Tensor self) -> Tensor", "may not start with '__'"),
        ("add(Tensor self, int a=1, int b) -> Tensor", "positional argument 'b' has no default"),
        ("add(Tensor self) -> (Tensor)", "single return is written without parentheses"),
        ("add(Tensor  self) -> Tensor", "' self' is not an argument name"),
        ("add(Tensor self,int a) -> Tensor", "'self,int a' is not an argument name"),
        ("add(Tensor self, int a=foo bar) -> Tensor", "default value 'foo bar' is not a literal"),
        ("add(Tensor self) -> Tensor[x]", "list size 'x' is not a number"),
        ("add(Tensor self, str a=\"x) -> Tensor", "unterminated string literal"),
        ("1add(Tensor self) -> Tensor", "is not an operator name"),
    ],
)
def test_malformed_schemas_are_refused_naming_the_schema(schema, problem):
    with pytest.raises(SchemaParseError) as info:
        FunctionSchema.parse(schema)
    message = str(info.value)
    assert repr(schema) in message
    assert problem in message


def test_schema_errors_are_bad_input():
    with pytest.raises(BadInput) as info:
        FunctionSchema.parse("nope")
    assert info.value.exit_code == 2
    with pytest.raises(SchemaParseError, match="must be text"):
        FunctionSchema.parse(None)  # type: ignore[arg-type]


def test_values_are_frozen_and_equal_by_content():
    a = FunctionSchema.parse("abs(Tensor self) -> Tensor")
    b = dataclasses.replace(a, _text=None)
    assert a == b and hash(a) == hash(b)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.name = OperatorName("neg")  # type: ignore[misc]
