"""``trainwright.catalog.fingerprint``: what a statement fingerprint keeps and what it ignores.

Pure ``ast``: no transformers needed. The golden values pin the output so that every supported Python
(3.10 to 3.13) computes the fingerprints the catalogue was built with.
"""

from __future__ import annotations

import ast
import sys
import textwrap
import time

from trainwright.catalog.fingerprint import (
    NORMALISER_VERSION,
    fingerprint_set,
    fingerprint_statements,
    normalise,
    statement_fingerprints,
)


def _fn(source: str) -> ast.FunctionDef:
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def _fps(source: str) -> list[str]:
    return [fp for fp, _ in statement_fingerprints(_fn(source))]


ORIGINAL = '''
def training_step(self, model, inputs, num_items_in_batch=None):
    """Docstring: not a statement."""
    model.train()
    inputs = self._prepare_inputs(inputs)
    if (
        self.args.torch_empty_cache_steps is not None
        and self.state.global_step % self.args.torch_empty_cache_steps == 0
    ):
        if is_torch_xpu_available():
            torch.xpu.empty_cache()
        else:
            torch.cuda.empty_cache()
    kwargs: dict = {}
    with self.compute_loss_context_manager():
        loss = self.compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)
    a, b = (1, 2)
    logger.info(f"loss {loss!r:>10} for {inputs['x']}")
    return loss.detach() / self.args.gradient_accumulation_steps
'''

# The same code as a user's copy might look: other formatting, comments, quotes, annotations,
# a renamed method with another signature.
REFORMATTED = """
def my_training_step(self, model, inputs, num_items_in_batch: int | None = None, extra=1) -> "Tensor":
    '''Another docstring.'''
    model.train()   # switch to train mode
    inputs = self._prepare_inputs(
        inputs,
    )
    if self.args.torch_empty_cache_steps is not None and (self.state.global_step % self.args.torch_empty_cache_steps == 0):
        if is_torch_xpu_available():
            torch.xpu.empty_cache()
        else:  # CUDA
            torch.cuda.empty_cache()
    kwargs = {}
    with (self.compute_loss_context_manager()):
        loss = self.compute_loss(model, inputs, num_items_in_batch = num_items_in_batch)
    (a, b) = 1, 2
    logger.info(f'loss {loss!r:>10} for {inputs["x"]}')
    return (loss.detach() / self.args.gradient_accumulation_steps)
"""


def test_docstring_excluded_and_every_depth_included() -> None:
    pairs = statement_fingerprints(_fn(ORIGINAL))
    kinds = [type(stmt).__name__ for _, stmt in pairs]
    assert kinds == [
        "Expr", "Assign", "If", "If", "Expr", "Expr", "AnnAssign", "With", "Assign", "Assign", "Expr", "Return",
    ]  # fmt: skip
    assert [fp for fp, _ in pairs] == [fp for fp, _ in fingerprint_statements(_fn(ORIGINAL))]
    assert fingerprint_set(_fn(ORIGINAL)) == frozenset(fp for fp, _ in pairs)
    assert all(len(fp) == 16 and int(fp, 16) >= 0 for fp, _ in pairs)


def test_formatting_comments_quotes_annotations_and_signature_do_not_matter() -> None:
    assert _fps(REFORMATTED) == _fps(ORIGINAL)


def test_changing_one_statement_changes_only_its_fingerprint() -> None:
    changed = ORIGINAL.replace("inputs = self._prepare_inputs(inputs)", "inputs = self._prepare(inputs)")
    before, after = _fps(ORIGINAL), _fps(changed)
    assert len(before) == len(after)
    differ = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert differ == [1]


def test_a_statement_under_another_header_is_another_statement() -> None:
    moved = ORIGINAL.replace("if is_torch_xpu_available():", "if is_torch_npu_available():")
    before, after = _fps(ORIGINAL), _fps(moved)
    # The header and both branches below it change; the siblings around it do not.
    assert [i for i, (a, b) in enumerate(zip(before, after)) if a != b] == [3, 4, 5]
    # Body and ``else`` of one ``if`` differ even for the same statement.
    both = _fps(
        """
        def f(self):
            if x:
                y()
            else:
                y()
        """
    )
    assert len(set(both)) == 3


def test_compound_statements_contribute_their_header_only() -> None:
    fn = _fn(ORIGINAL)
    outer_if = next(s for s in fn.body if isinstance(s, ast.If))
    assert "torch.cuda" not in normalise(outer_if) and "xpu" not in normalise(outer_if)
    assert normalise(outer_if).startswith("if ")
    with_stmt = next(s for s in fn.body if isinstance(s, ast.With))
    assert "compute_loss_context_manager" in normalise(with_stmt)
    assert "num_items_in_batch" not in normalise(with_stmt)


def test_nested_functions_and_classes_are_walked_their_docstrings_not() -> None:
    source = '''
    def outer(self):
        def inner(a: int, b=2) -> int:
            """inner docs"""
            return a + b
        class Local(Base):
            """class docs"""
            x = 1
        return inner
    '''
    pairs = statement_fingerprints(_fn(source))
    assert [type(s).__name__ for _, s in pairs] == ["FunctionDef", "Return", "ClassDef", "Assign", "Return"]
    # ``return a + b`` inside ``inner`` is not the same statement as one at the top level.
    top = _fps("def g(self):\n    return a + b\n")
    assert top[0] != pairs[1][0]
    # Annotations of the nested def do not count.
    plain = source.replace("a: int, b=2) -> int", "a, b=2)")
    assert _fps(plain) == [fp for fp, _ in pairs]


def test_relative_and_absolute_imports_inside_a_method_match() -> None:
    relative = _fps("def f(self):\n    from .trainer_pt_utils import get_model_param_count\n")
    absolute = _fps("def f(self):\n    from transformers.trainer_pt_utils import get_model_param_count\n")
    parent = _fps("def f(self):\n    from ..trainer_pt_utils import get_model_param_count\n")
    other = _fps("def f(self):\n    from .trainer_pt_utils import other\n")
    assert relative == absolute == parent != other
    assert _fps("def f(self):\n    from . import x\n") == _fps("def f(self):\n    from trl import x\n")


def test_try_match_and_loop_branches() -> None:
    source = """
    def f(self):
        try:
            a()
        except ValueError as e:
            a()
        except Exception:
            a()
        else:
            a()
        finally:
            a()
        for i in range(3):
            a()
        else:
            a()
        while cond:
            a()
        match value:
            case 1:
                a()
            case [x, *_] if x:
                a()
    """
    fps = _fps(source)
    assert len(fps) == len(set(fps)) == 14


def test_different_code_stays_different() -> None:
    variants = [
        "x = f(a, b)",
        "x = f(b, a)",
        "x = f(a, b=b)",
        "x = f(a=a, b=b)",
        "x = f(b=b, a=a)",
        "x = f(*a)",
        "x = f(**a)",
        "y = f(a, b)",
        "x += f(a, b)",
        "x = f(a, b)[0]",
        "x = 'a'",
        "x = b'a'",
        "x = 1",
        "x = 1.0",
        "x = True",
        "x = None",
        "x = f'{a}'",
        "x = f'{a!r}'",
        "x = f'{a:>3}'",
        "x = '{a}'",
        "x: int",
    ]
    fps = [_fps(f"def f(self):\n    {v}\n")[0] for v in variants]
    assert len(set(fps)) == len(variants)


GOLDEN_SOURCE = '''
def golden(self, a, *args, b: int = 1, **kw):
    """Pinned output: the same on every supported Python."""
    x, y = (1, 2)
    s = f"{a!r:>{b}} {kw['k']} \\u9fff é"
    t = "a" "b"
    if a is not None and b > 0:
        for i, j in enumerate(args):
            with ctx(i) as c, other():
                z: int = c + j
    else:
        del x
    try:
        raise ValueError("x")
    except (ValueError, TypeError) as e:
        pass
    match a:
        case {"k": 1, **rest}:
            pass
        case Point(x=0) | None:
            pass
    return lambda q, *r, **s: (q, r, s)
'''
GOLDEN = [
    "873549c9d88028ac",
    "72e7d9bbd07c757c",
    "f260e2b08b36ecef",
    "24605dd8c3557bec",
    "3f4e386095cfb764",
    "d31b83ae4a48e00d",
    "91f521b93ffee243",
    "a1a7f4a88f6261b2",
    "e31c0f0089598b1c",
    "39d00f7a61bbe48c",
    "45c309efd7dd3c7e",
    "103a3b90cf5f4d30",
    "2fb956bc2e6e5727",
    "b6552c4112cc1983",
    "4dc5ab98836de408",
]


def test_golden_fingerprints_are_stable_across_python_versions() -> None:
    assert NORMALISER_VERSION == 1, "a new normaliser version needs new golden values and regenerated data"
    assert _fps(GOLDEN_SOURCE) == GOLDEN, (
        f"fingerprints changed on Python {sys.version.split()[0]}: {_fps(GOLDEN_SOURCE)}"
    )


def test_fast_enough_for_a_pre_commit_hook() -> None:
    body = "\n".join(
        f"    if self.args.x{i} is not None:\n        y{i} = self.f(a, b={i}, c=[1, 2, 3])\n"
        f"    logger.info(f'step {{self.state.global_step}} {i}')"
        for i in range(500)
    )
    fn = _fn(f"def big(self, a, b):\n{body}\n")
    start = time.process_time()
    n = len(statement_fingerprints(fn))
    elapsed = time.process_time() - start
    assert n == 1500
    assert elapsed < 1.5, f"{elapsed / n * 1e6:.0f} us per statement"
