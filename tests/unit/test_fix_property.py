"""Property: applying any fix `check` proposes yields the verdict the fix promises.

Random matrices (1-3 extra dimensions, versions or enumerations, changeable or not;
2-5 releases with ranges, exact pins, pre-release pins, torch variants, dimension
constraints and exceptions) meet random environments. Each proposed fix is *applied the
way a user would*: its pip commands are read as pip would install them (the newest
matching torch from the named index, with that index's variant label; a command under
``pythonX.Y -m pip`` is a fresh environment), and its manual steps change the driver
values they name. The environment that results must get exactly the status the fix
announced, and may differ from the original only in what the fix lists as changed:
packages a fix does not touch stay as installed, a dimension the user cannot change
never changes, and fixes that change a driver come after every fix that keeps it.
"""

from __future__ import annotations

import datetime as _dt
import random
import re
import shlex
from typing import Dict, List, Optional, Tuple

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from adapter_matrix.check.judgment import Environment, Fix
from adapter_matrix.check.stack.judge import installed_stack, judge_stack
from adapter_matrix.check.stack.search import Held, stack_fixes
from adapter_matrix.check.verdict import verdict
from adapter_matrix.matrix.diagnostics import Mark
from adapter_matrix.matrix.model import (
    ENUM,
    VERSION,
    Constraint,
    Dimension,
    InstallSource,
    Layer,
    LayerRelease,
    Matrix,
    MatrixAdapter,
    PackagePin,
    PinSet,
    PythonClaim,
    PythonVersion,
    Release,
    Spec,
    Status,
    StatusRule,
    TorchLine,
    Value,
)

TODAY = _dt.date(2026, 6, 1)
MARK = Mark("random.yaml", 1, 1)
DIST = "demo-adapter"
PYTHONS = [PythonVersion.parse(f"3.{m}") for m in range(8, 14)]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
VERSION_VALUES = ["7.0", "8.0.RC1", "8.0", "8.1.RC2", "9.0", "absent"]  # absent: not installed at all
ENUM_VALUES = ["Ascend910B", "Ascend950PR", "linux", "windows", "absent"]
USABLE = (Status.SUPPORTED, Status.EXPERIMENTAL, Status.DEPRECATED)


def _spec(text: str) -> Spec:
    return Spec.parse(text)


# Matrices and environments are built from one drawn seed with random.Random: about ten
# times faster to generate than drawing each choice through hypothesis (the test runs
# 2,000 examples in the default test run), at the price of shrinking; a failure prints
# the seed, the matrix and the environment.


def torch_lines(rnd: random.Random) -> Tuple[TorchLine, ...]:
    first = rnd.randint(1, 8)
    lines = []
    for minor in range(first, first + rnd.randint(2, 4)):
        patches = tuple(Version(f"2.{minor}.{p}") for p in range(rnd.randint(1, 3)))
        low = rnd.randint(0, 3)
        pythons = tuple(PYTHONS[low : low + rnd.randint(2, 4)])
        lines.append(TorchLine(Version(f"2.{minor}"), _dt.date(2024, 1, minor), patches, pythons, "pypi", MARK))
    return tuple(lines)


def dimensions(rnd: random.Random) -> Tuple[Dimension, ...]:
    out = []
    for i in range(rnd.randint(1, 3)):
        kind = rnd.choice([VERSION, ENUM])
        pool = VERSION_VALUES if kind == VERSION else ENUM_VALUES
        texts = rnd.sample(pool, rnd.randint(1, 4))
        values = tuple(sorted((Value.of(t, kind) for t in texts), key=lambda v: v.order))
        changeable = rnd.random() < (0.5 if kind == VERSION else 0.2)  # a changeable enum is rare, but allowed
        out.append(Dimension(f"d{i}", "", values, (), MARK, kind, changeable))
    return tuple(out)


def constraints(rnd: random.Random, dims: Tuple[Dimension, ...]) -> Tuple[Tuple[str, Constraint], ...]:
    out = []
    for dim in dims:
        if rnd.random() < 0.5:
            continue
        chosen = rnd.sample(dim.values, rnd.randint(1, len(dim.values)))
        versions = [v for v in chosen if v.version is not None]
        if dim.kind == VERSION and len(chosen) == 1 and not chosen[0].absent and rnd.random() < 0.5:
            spec = _spec(f">={chosen[0].text}")  # a range, e.g. >=8.0.RC1
            out.append((dim.name, Constraint(spec.text, spec=spec)))
        elif dim.kind == VERSION and len(versions) >= 2 and rnd.random() < 0.5:
            # a minimum with compatible series (`{min: 9.0, compatible: ["8.0.*"]}`), or a list of
            # values and ranges, any of them (`[7.0, ">=8.1.RC2"]`)
            low, high = min(versions, key=lambda v: v.order), max(versions, key=lambda v: v.order)
            assert low.version is not None
            series = (_spec(f"=={low.version.major}.{low.version.minor}.*"),)
            if rnd.random() < 0.5:
                spec = _spec(f">={high.text}")
                text = f"{spec.text} (compatible series {series[0].text})"
                out.append((dim.name, Constraint(text, spec=spec, also=series, series=True)))
            else:
                out.append(
                    (dim.name, Constraint(f"{low.text}, >={high.text}", values=(low,), also=(_spec(f">={high.text}"),)))
                )
        else:
            out.append((dim.name, Constraint(", ".join(v.text for v in chosen), values=tuple(chosen))))
    return tuple(out)


def releases(rnd: random.Random, lines: Tuple[TorchLine, ...], dims: Tuple[Dimension, ...]) -> Tuple[Release, ...]:
    out = []
    for i in range(rnd.randint(2, 5)):
        line = rnd.choice(lines)
        shape = rnd.choice(["range", "pin", "nightly"])
        if shape == "range":
            last = rnd.choice([later for later in lines if later.minor >= line.minor])
            torch = _spec(f">={line.minor},<2.{last.minor.minor + 1}")
        elif shape == "pin":
            torch = _spec(str(rnd.choice(line.patches)))
        else:
            torch = _spec(f"{line.minor}.0.dev2025010{rnd.randint(1, 9)}")
        rules = ()
        if rnd.random() < 0.5:
            rule_python = _spec(f"=={rnd.choice(PYTHONS).version}") if rnd.random() < 0.5 else None
            rules = (
                StatusRule(None, rule_python, constraints(rnd, dims), rnd.choice(list(Status)), "rule", None, MARK),
            )
        low = rnd.choice(["3.8", "3.9"])
        release = Release(
            version=Version(f"0.{i + 1}.0"),
            date=None,
            torch=torch,
            python=PythonClaim(f">={low}", spec=_spec(f">={low}")),
            status=rnd.choice(
                [Status.SUPPORTED] * 3 + [s for s in Status if s is not Status.UNSUPPORTED]
            ),  # unsupported: exceptions only
            reason="declared",
            link=None,
            supported_until=rnd.choice([None, None, _dt.date(2026, 1, 1)]),
            dimensions=constraints(rnd, dims),
            rules=rules,
            mark=MARK,
            variant="cpu" if rnd.random() < 0.25 else None,
        )
        out.append(release)
    return tuple(out)


def matrix_of(rnd: random.Random) -> Matrix:
    lines = torch_lines(rnd)
    dims = dimensions(rnd)
    sources = (
        InstallSource("pypi", "https://pypi.org/simple", None, None, None, MARK),
        InstallSource("cpu", CPU_INDEX, None, "cpu", None, MARK),
    )
    return Matrix(
        "random.yaml",
        2,
        MatrixAdapter(DIST, "npu", None, MARK),
        lines,
        sources,
        dims,
        (),
        releases(rnd, lines, dims),
        (),
        declares_shims=False,
    )


def _known_torches(matrix: Matrix) -> List[Version]:
    return [p for line in matrix.torch for p in line.patches] + [p for rel in matrix.releases for p in rel.pins]


def environment_of(rnd: random.Random, matrix: Matrix) -> Environment:
    torch: Optional[Version] = rnd.choice(_known_torches(matrix) + [Version("2.0.1"), None])
    if torch is not None and rnd.random() < 0.5:
        torch = Version(f"{torch}+cpu")
    adapter = rnd.choice([r.version for r in matrix.releases] + [Version("9.9.9"), None])
    dims = []
    for dim in matrix.dimensions:
        pool = list(dim.values) + [None, Value.of("9.9" if dim.kind == VERSION else "other", dim.kind)]
        dims.append((dim.name, rnd.choice(pool)))
    return Environment(rnd.choice(PYTHONS), torch=torch, adapter=adapter, dimensions=tuple(dims))


# -- applying a fix the way a user would ------------------------------------------------------

_DRIVER = re.compile(
    r"^(?:(?:upgrade|downgrade|change) (\S+) from \S+ to (\S+)|install (\S+) (\S+)|remove (\S+) \S+) \("
)


def _pip_install(matrix: Matrix, requirement: Requirement, index: Optional[str]) -> Version:
    """What pip installs for a torch requirement: the newest known version it allows, with
    the variant label of the index it came from."""
    specifier = SpecifierSet(str(requirement.specifier))
    exact = [s for s in specifier if s.operator == "=="]
    if exact:
        return Version(exact[0].version)
    allowed = [v for v in _known_torches(matrix) if specifier.contains(v, prereleases=v.is_prerelease)]
    newest = max(allowed)
    variant = next((s.variant for s in matrix.sources if s.index_url == index), None)
    return Version(f"{newest}+{variant}") if variant else newest


def apply(matrix: Matrix, env: Environment, fix: Fix) -> Environment:
    python, torch, adapter, dims = env.python, env.torch, env.adapter, dict(env.dimensions)
    for step in fix.manual:
        driver = _DRIVER.match(step)
        if driver:
            name = driver[1] or driver[3] or driver[5]
            dims[name] = matrix.dimension(name).value(driver[2] or driver[4] or "absent")
    fresh = True
    for command in fix.commands:
        words = shlex.split(command)
        if words[0].startswith("python"):  # pythonX.Y -m pip: a new environment
            python = PythonVersion.parse(words[0][len("python") :])
            if fresh:
                torch = adapter = None
                fresh = False
            words = words[2:]
        assert words[:2] == ["pip", "install"], command
        index = words[words.index("--index-url") + 1] if "--index-url" in words else None
        for word in words[2:]:
            if word.startswith(("--", "http")) or word == index:
                continue
            requirement = Requirement(word)
            if requirement.name == "torch":
                torch = _pip_install(matrix, requirement, index)
            else:
                assert requirement.name == DIST, command
                adapter = Version(next(iter(requirement.specifier)).version)
    return Environment(python, torch=torch, adapter=adapter, dimensions=tuple(dims.items()))


def _pip_only_exists(matrix: Matrix, env: Environment, now: Status) -> bool:
    """Whether some environment reachable by pip alone gets a better, usable verdict: another
    release and/or torch (a known patch or pin, with the installed variant label; from an
    index the matrix names for it), the same Python, every dimension as it is and known
    to every release that constrains it. An oracle that knows nothing of the fix search."""
    label = env.torch.local if env.torch is not None else None
    for release in matrix.releases:
        if any(env.dimension(name) is None for name, _c in release.dimensions):
            continue  # a fix for it would need a "make sure" step
        if env.torch is not None and release.variant is not None and release.variant != label:
            continue  # another variant family
        torches = [env.torch] if env.torch is not None else []
        for version in [p for line in matrix.torch for p in line.patches] + list(release.pins):
            if label and label != "cpu":
                continue  # only the cpu index is declared
            torches.append(Version(f"{version}+{label or release.variant}") if (label or release.variant) else version)
        for torch in torches:
            candidate = env._replace(torch=torch, adapter=release.version)
            outcome = verdict(matrix, candidate, TODAY).outcome
            if candidate != env and outcome in USABLE and _RANKS[outcome] < _RANKS[now]:
                return True
    return False


_RANKS = {o: i for i, o in enumerate(Status)}
_STATUS = [Status.SUPPORTED, Status.EXPERIMENTAL, Status.DEPRECATED]


def _parts(env: Environment) -> Dict[str, object]:
    return {"python": env.python, "torch": env.torch, "adapter": env.adapter, **dict(env.dimensions)}


@settings(
    max_examples=2000,
    deadline=None,
    derandomize=True,  # the same matrices on every run: a CI failure reproduces locally
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(st.integers(min_value=0, max_value=2**64))
def test_every_proposed_fix_reaches_the_status_it_promises(seed):
    rnd = random.Random(seed)
    matrix = matrix_of(rnd)
    env = environment_of(rnd, matrix)
    where = f"seed {seed}: {matrix}\n{env}"
    answer = verdict(matrix, env, TODAY)
    drivers = [i for i, fix in enumerate(answer.fixes) if any(matrix.dimension(c) for c in fix.changes)]
    keeps = [i for i, fix in enumerate(answer.fixes) if i not in drivers]
    assert not drivers or not keeps or max(keeps) < min(drivers), (
        f"a driver change ranked before a fix that keeps it; {where}"
    )
    pip_only = [not fix.manual and "python" not in fix.changes for fix in answer.fixes]
    if answer.outcome is not Status.SUPPORTED and pip_only[:1] != [True]:  # the oracle only when needed: it is slow
        assert not _pip_only_exists(matrix, env, answer.outcome), (
            f"a pip-only fix exists, but the first fix is {answer.fixes[:1]}; {where}"
        )
    assert pip_only == sorted(pip_only, reverse=True), f"a fix with a manual step ranked before a pip-only one; {where}"
    # the one rule: among fixes of one kind (pip alone, a step by hand, a driver changed), the
    # better status first, and within a status the fewer changes first
    kinds = [(i in drivers, not p) for i, p in enumerate(pip_only)]
    for i in range(len(answer.fixes) - 1):
        a, b = answer.fixes[i], answer.fixes[i + 1]
        if kinds[i] == kinds[i + 1]:
            order_a = (_STATUS.index(a.cell.status), len(a.changes))
            order_b = (_STATUS.index(b.cell.status), len(b.changes))
            assert order_a <= order_b, f"{b.summary} ranks after {a.summary}; {where}"
    for a in answer.fixes:  # the ranking rule: no fix changes more than another for a status no better
        for b in answer.fixes:
            assert not (
                set(a.changes) > set(b.changes)
                and set(a.manual) >= set(b.manual)
                and _STATUS.index(a.cell.status) >= _STATUS.index(b.cell.status)
            ), f"{a.summary} changes more than {b.summary} for a status no better; {where}"
    for fix in answer.fixes:
        after = apply(matrix, env, fix)
        got = verdict(matrix, after, TODAY)
        assert got.outcome in USABLE, (fix.summary, got.reasons, where)
        assert _RANKS[got.outcome] < _RANKS[answer.outcome], f"{fix.summary} does not improve {answer.outcome}; {where}"
        if env.torch is not None:
            # the family is kept, or is the one the kept adapter requires (IPEX 2.8.0+cpu beside PyPI's torch)
            kept_for = {r.variant for r in matrix.releases_of(env.adapter)} if env.adapter is not None else set()
            assert after.torch is not None and (
                after.torch.local == env.torch.local
                or ("adapter" not in fix.changes and not fix.manual and after.torch.local in kept_for)
            ), f"{fix.summary} leaves torch's variant family; {where}"
        assert got.outcome.value == fix.cell.status.value, (fix.summary, got.outcome, got.reasons, where)
        before, now = _parts(env), _parts(after)
        changed = {name for name in before if before[name] != now[name]}
        assert changed == set(fix.changes), (fix.summary, fix.commands, changed, where)
        for name in fix.changes:
            dim = matrix.dimension(name)
            assert dim is None or dim.changeable, f"{fix.summary} changes {name}, which the user cannot change; {where}"
            assert dim is None or any(step.split()[1] == name for step in fix.manual), (
                f"{name} changes without a manual step; {where}"
            )


# -- the stack's fix search: a layer of any-of pins, an optional requirement, series ------------


def _any_of(rnd: random.Random, texts: List[str]) -> PinSet:
    """1 to 3 alternatives, each a version or a range: a list in a layer's matrix."""
    return PinSet(tuple(_spec(t) for t in rnd.sample(texts, rnd.randint(1, min(3, len(texts))))))


def layer_of(rnd: random.Random, matrix: Matrix) -> Layer:
    """A layer on ``matrix``: each release pins torch, maybe the adapter, a package ``dep`` by
    any-of lists, maybe an optional ``opt`` (requires-if-installed), maybe Pythons by a list and
    a dimension by a list or a minimum with compatible series."""
    patches = [str(p) for line in matrix.torch for p in line.patches]
    ranges = [f">={line.minor},<2.{line.minor.minor + 1}" for line in matrix.torch]
    releases = []
    for i in range(rnd.randint(1, 3)):
        pins = [PackagePin("torch", _any_of(rnd, patches + ranges[:1]), MARK)]
        if rnd.random() < 0.6:
            pins.append(PackagePin(DIST, _any_of(rnd, [str(r.version) for r in matrix.releases]), MARK))
        pins.append(PackagePin("dep", _any_of(rnd, ["1.0", "1.1", "2.0", ">=1.1,<2"]), MARK))
        if rnd.random() < 0.5:
            pins.append(PackagePin("opt", _any_of(rnd, ["0.1", "0.2"]), MARK, optional=True))
        python = _any_of(rnd, ["3.9", "3.10", "3.11", ">=3.12"]) if rnd.random() < 0.5 else None
        releases.append(
            LayerRelease(
                version=Version(f"1.{i}.0"),
                date=None,
                status=rnd.choice([Status.SUPPORTED, Status.SUPPORTED, Status.EXPERIMENTAL]),
                reason="drawn",
                link=None,
                python=python,
                packages=tuple(pins),
                adapter_line=None,
                dimensions=constraints(rnd, tuple(d for d in matrix.dimensions if d.kind == VERSION))[:1],
                mark=MARK,
            )
        )
    return Layer("random-layer.yaml", 2, "lay", DIST, "", tuple(releases), MARK)


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(st.integers(min_value=0, max_value=2**64))
def test_every_stack_fix_over_lists_optional_pins_and_series_is_what_it_promises(seed):
    rnd = random.Random(seed)
    matrix = matrix_of(rnd)
    layer = layer_of(rnd, matrix)
    env = environment_of(rnd, matrix)
    if env.torch is None or env.adapter is None:
        env = env._replace(torch=Version(rnd.choice(_known_torches(matrix)).public), adapter=matrix.releases[0].version)
    versions = {
        "lay": rnd.choice([str(r.version) for r in layer.releases] + [None]),
        "dep": rnd.choice(["1.0", "1.1", "1.5", "2.0", None]),
        "opt": rnd.choice(["0.1", "0.2", "0.3", None]),
    }
    stack = installed_stack(env, [layer], versions)
    where = f"seed {seed}: {layer}\n{stack}"
    if judge_stack(matrix, [layer], stack, TODAY).status is Status.SUPPORTED:
        return
    found = stack_fixes(matrix, [layer], stack, Held(), TODAY)
    for fix, after in zip(found.fixes, found.stacks):
        kept = [layer] if after.version("lay") is not None else []
        again = judge_stack(matrix, kept, after, TODAY)
        assert again.status is fix.cell.status, (fix.summary, again.reasons, where)
        if versions["opt"] is None:  # an optional requirement that is absent is never installed
            assert after.version("opt") is None and "opt" not in " ".join(fix.commands), (fix.summary, where)
