"""Every word a generated table shows, in every language, in one table.

Each entry holds the English and the Chinese text side by side, so a word cannot be
added, changed or removed in one language only: the tables of the two languages are
the same table with other labels (issue: the Chinese and English docs drifted apart).
Templates name their fields (``{date}``, ``{session}``); a renderer decides how each
field looks (a session name is shown as code).
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Sequence, Tuple

__all__ = ["LANGS", "WORDS", "word", "legend"]

LANGS: Tuple[str, ...] = ("en", "zh")

# key -> (en, zh). Status keys double as the CSS classes of the HTML page.
WORDS: Dict[str, Tuple[str, str]] = {
    # column headers
    "torch": ("torch", "torch"),
    "python": ("Python", "Python"),
    "adapter": ("adapter release", "适配器版本"),
    "dimensions": ("extra dimensions", "额外维度"),
    "status": ("status", "状态"),
    "until": ("supported until", "支持截止"),
    "line": ("release line", "版本系列"),
    # titles; {dist} is the adapter's distribution name
    "grid_title": ("{dist} {version}: torch \u00d7 Python", "{dist} {version}\uff1atorch \u00d7 Python"),
    "grid_title_all": (
        "{dist}: torch \u00d7 Python, every maintained release",
        "{dist}\uff1atorch \u00d7 Python\uff0c所有维护中的版本",
    ),
    "dimension_title": ("{dist}: {dimension} \u00d7 torch", "{dist}\uff1a{dimension} \u00d7 torch"),
    "verified_title": ("{dist} {version}: verified combinations", "{dist} {version}\uff1a已验证的组合"),
    "releases_title": ("{dist} releases", "{dist} 版本"),
    # the history view: releases per torch line, post-releases grouped, as a vendor publishes them
    "history_title": ("{dist}: releases per torch line", "{dist}\uff1a各 torch 版本系列的版本"),
    "torch_line": ("torch line", "torch 版本系列"),
    "newest_build": ("newest build", "最新构建"),
    "earlier_builds": ("earlier builds", "更早的构建"),
    "platforms": ("platforms", "平台"),
    "released": ("released", "发布日期"),
    # the lag view: days from a torch release to the adapter's first releases for it
    "lag_title": (
        "{dist}: days from each torch release to the releases for it",
        "{dist}\uff1a从每个 torch 版本发布到为其发布的版本的天数",
    ),
    "torch_released": ("torch released", "torch 发布日期"),
    "lag_first_release": ("first release claiming it", "首个声明它的版本"),
    "lag_first_supported": ("first release supporting it", "首个支持它的版本"),
    "lag_days": ("days", "天数"),
    "lag_none_yet": ("none yet ({days} days)", "尚无（已 {days} 天）"),
    "lag_heading": ("Release lag (days after torch)", "发布滞后（torch 发布后的天数）"),
    "lag_not_yet": ("not yet", "尚无"),
    "lag_by_git": (", from git", "\uff0c来自 git"),
    "lag_note": (
        "Days after the torch line's X.Y.0 reached the index: the adapter's first release that claims the line "
        "(experimental or better) and its first that claims a cell of it supported, by their dates.",
        "自该 torch 版本系列的 X.Y.0 上架索引起的天数：适配器首个声明该系列的版本（实验性或更高）及首个声明其中某组合为支持的版本，按其日期计。",
    ),
    "no_release": ("{dist}: no release yet", "{dist}\uff1a尚无版本"),
    "no_dimension": ("{dist}: no extra dimension", "{dist}\uff1a没有额外维度"),
    "legend": ("Legend", "图例"),
    "generated": (
        "Generated from {matrix} by {command}; do not edit by hand.",
        "由 {command} 根据 {matrix} 生成，请勿手动编辑。",
    ),
    # cell states: the word shown, then a description for the legend
    "supported": ("supported", "支持"),
    "supported_about": (
        "claimed: this release promises it works; a release is marked supported only after each such cell "
        "passed its tests on the release's sources (the verified view shows the runs)",
        "声明：此版本承诺可用；只有每个此类组合都在该版本的源码上通过测试后，版本才会被标记为支持（运行记录见已验证视图）",
    ),
    "experimental": ("experimental", "实验性"),
    "experimental_about": ("expected to work, not yet fully tested", "预期可用，尚未充分测试"),
    "deprecated": ("deprecated", "已弃用"),
    "deprecated_about": ("works, but support will end", "仍可使用，但即将停止支持"),
    "eol": ("end of life", "停止维护"),
    "eol_about": ("support has ended", "支持已结束"),
    "broken": ("broken", "已损坏"),
    "broken_about": ("known not to work", "已知无法使用"),
    "unclaimed": ("not supported", "不支持"),
    "unclaimed_about": ("torch has a wheel, this release does not support it", "torch 有对应 wheel，但此版本不支持"),
    "nowheel": ("no wheel", "无 wheel"),
    "nowheel_about": ("torch publishes no wheel for this Python", "torch 未发布此 Python 版本的 wheel"),
    "verified": ("verified", "已验证"),
    "verified_cell": ("verified {date}, torch {torch}{at}", "已验证 {date}，torch {torch}{at}"),
    "verified_about": (
        "a test session passed on the cell's torch patch, on the date and at the commit shown; before a release, "
        "the release gate (adapter-matrix validate --results --strict) also requires the record to be at most "
        "{days} days old and the sources under test unchanged since",
        "测试会话已在该组合的 torch 补丁版本上通过（日期与提交如图所示）；发布前，发布关卡"
        "（adapter-matrix validate --results --strict）还要求记录不超过 {days} 天，且被测源码此后未变",
    ),
    "at_commit": (" at {commit}", "，提交 {commit}"),
    "proves": (", proves {release}", "，证明 {release}"),
    "stale": ("stale", "已过期"),
    "stale_cell": ("stale: passed {date}, torch {torch}{at}", "已过期：{date} 通过，torch {torch}{at}"),
    "stale_about": (
        "a test session passed, but on another torch patch than the cell claims now",
        "测试会话曾通过，但所用的 torch 补丁版本与该组合现在声明的不同",
    ),
    "unverified": ("claimed but not verified", "声明支持但未验证"),
    "unverified_about": ("no test record of this release yet", "此版本尚无测试记录"),
    "unreleased": ("not yet verified: unreleased", "尚未验证：未发布"),
    "unreleased_about": (
        "this release is not frozen yet (adapter-matrix release): any record of it proves code in progress, not a release",
        "此版本尚未冻结（adapter-matrix release）：其记录证明的是开发中的代码，而非已发布的版本",
    ),
    "frozen_title": (
        " (each record proves release {version}, frozen {date}{at})",
        "（每条记录证明版本 {version}，冻结于 {date}{at}）",
    ),
    "unreleased_title": (
        " (release {version} is not frozen: unreleased code)",
        "（版本 {version} 尚未冻结：未发布的代码）",
    ),
    "failed": ("failed", "验证失败"),
    "failed_cell": ("failed {date}, torch {torch}{at}", "验证失败 {date}，torch {torch}{at}"),
    "failed_about": ("the newest test session failed", "最近一次测试会话失败"),
    "mixed": ("depends on the extra dimensions", "取决于额外维度"),
    "mixed_about": ("the cell differs per extra-dimension value", "该组合因额外维度的取值而异"),
    "served_cell": ("{status} ({versions})", "{status}（{versions}）"),
    "grid_note": (
        "Each cell shows the best status any release gives it, from the newest release that gives it: "
        "{usual} unless the cell names another. "
        "Every release's answer ({others} too) is in the releases view, in each cell's details on the HTML page, "
        "and in --release tables.",
        "每个单元格显示各版本给出的最佳状态，取自给出该状态的最新版本：除非单元格注明其他版本，均为 {usual}。"
        "每个版本的结果（包括 {others}）见版本视图、HTML 页面中各单元格的详情，以及 --release 表格。",
    ),
    # the capabilities view
    "capabilities_title": ("{dist}: device features per torch line", "{dist}\uff1a各 torch 版本的设备功能"),
    "shim": ("shim", "shim 模块"),
    "present": ("yes", "支持"),
    "present_about": ("this torch offers the feature to the device", "该 torch 版本向设备提供此功能"),
    "partial": ("not on every Python", "并非所有 Python 版本"),
    "partial_cell": ("yes, except Python {spec}", "支持，Python {spec} 除外"),
    "partial_about": (
        "absent on some Python versions (hover or see the JSON for why)",
        "在部分 Python 版本上不可用（原因见悬停提示或 JSON）",
    ),
    "absent": ("no", "不支持"),
    "absent_about": (
        "this torch lacks it; the conformance test skips with the shim's reason",
        "该 torch 版本缺少此功能；一致性测试按 shim 给出的原因跳过",
    ),
    # the op-coverage views (PyTorch's OpInfo sweep)
    "ops_title": (
        "{dist}: PyTorch's OpInfo tests on the {device} device (ops passed/failed/unsupported per family)",
        "{dist}\uff1a{device} 设备上的 PyTorch OpInfo 测试（各算子族通过/失败/不支持的算子数）",
    ),
    "ops_count": ("ops", "算子数"),
    "ops_skipped": (" ({n} not comparable)", "（{n} 个无法比较）"),
    "ops_float32": ("float32 match", "float32 一致"),
    "ops_time": ("sweep time", "耗时"),
    "ops_cell_about": (
        "{passed} passed, {failed} known failures, {unexpected} unexplained, {unsupported} unsupported, {skipped} not comparable",
        "{passed} 个通过，{failed} 个已知失败，{unexpected} 个未解释，{unsupported} 个不支持，{skipped} 个无法比较",
    ),
    "ops_ok": ("all match", "全部一致"),
    "ops_ok_about": (
        "every op matches CPU, or the device rejects it by design",
        "所有算子与 CPU 一致，或按设计被设备拒绝",
    ),
    "ops_known": ("known failure", "已知失败"),
    "ops_known_about": ("fails as the expectations say, with their reason", "按预期失败，原因见预期文件"),
    "ops_new": ("unexplained", "未解释"),
    "ops_new_about": ("a result the expectations do not explain: the sweep failed", "预期文件无法解释的结果：扫描失败"),
    "ops_unsupported": ("unsupported", "不支持"),
    "ops_unsupported_about": ("the device rejects it by design", "设备按设计拒绝该算子"),
    "ops_every_line": ("every swept line", "所有已扫描版本"),
    "op_dtypes_title": (
        "{dist}: PyTorch's OpInfo tests on the {device} device (tasks passed/failed per dtype and direction)",
        "{dist}\uff1a{device} 设备上的 PyTorch OpInfo 测试（各数据类型与方向通过/失败的任务数）",
    ),
    "opd_forward": ("forward", "前向"),
    "opd_backward": ("backward", "反向"),
    "opd_module": ("modules", "模块"),
    "opd_cell_about": (
        "{passed} passed, {failed} failed, {crashed} crashed, {timeout} timed out, {skipped} not comparable",
        "{passed} 个通过，{failed} 个失败，{crashed} 个崩溃，{timeout} 个超时，{skipped} 个无法比较",
    ),
    "op_failures_title": ("{dist}: ops that do not match CPU, and why", "{dist}\uff1a与 CPU 不一致的算子及原因"),
    "opf_op": ("op", "算子"),
    "opf_family": ("family", "算子族"),
    "opf_tasks": ("dtypes", "数据类型"),
    "opf_status": ("status", "状态"),
    "opf_why": ("why", "原因"),
    # the selector view and page (adapter-matrix table --view selector)
    "selector_title": ("{dist}: install command", "{dist}\uff1a安装命令"),
    "sel_command": ("install commands", "安装命令"),
    "sel_choose": ("Choose your combination", "选择你的组合"),
    "sel_result": ("Your combination", "你的组合"),
    "sel_released": ("released {date}", "发布于 {date}"),
    "sel_until": ("supported until {date}", "支持至 {date}"),
    "sel_env": ("In a Python {python} environment:", "在 Python {python} 环境中："),
    "sel_first": (
        "First install {name} {value}: it is not a pip package.",
        "请先安装 {name} {value}（它不是 pip 包）。",
    ),
    "sel_machine": ("For machines with {name} {value}.", "适用于 {name} 为 {value} 的机器。"),
    "sel_nowheel": (
        "torch {torch} has no wheel for Python {python}",
        "torch {torch} 没有适用于 Python {python} 的安装包",
    ),
    "sel_noclaim": ("no {dist} release supports {value} with {picked}", "没有 {dist} 版本在 {picked} 下支持 {value}"),
    "sel_nocell": ("{dist} does not describe this combination", "{dist} 的兼容矩阵未描述此组合"),
    "sel_nearest": ("The nearest combination (check's first fix):", "最接近的组合（兼容性检查的首个修复）："),
    "sel_system": (
        "A system change, not a pip one ({steps}):",
        "需要更改系统，而非 pip 包（{steps}）：",
    ),
    "sel_release_off": ("{dist} {release} does not serve {picked}", "{dist} {release} 不支持 {picked}"),
    "sel_upgrade": ("upgrade {name} from {old} to {new}", "将 {name} 从 {old} 升级到 {new}"),
    "sel_downgrade": ("downgrade {name} from {old} to {new}", "将 {name} 从 {old} 降级到 {new}"),
    "sel_change": ("change {name} from {old} to {new}", "将 {name} 从 {old} 更换为 {new}"),
    "sel_nocommand": (
        "No install command is published for a combination whose status is {status}.",
        "状态为{status}的组合不提供安装命令。",
    ),
    "sel_copy": ("Copy", "复制"),
    "sel_copied": ("Copied", "已复制"),
    "sel_evidence": ("Tested: {state} on {date} with torch {torch}", "测试：{date}，torch {torch}，{state}"),
    "sel_evidence_folder": ("Test records: {folder}", "测试记录：{folder}"),
    "sel_frozen": ("release {release} is frozen: its records prove it", "版本 {release} 已冻结：其测试记录即为证明"),
    "sel_noscript": (
        "This page needs JavaScript. The same commands: adapter-matrix table --view selector --format markdown",
        "此页面需要 JavaScript。相同的命令可由 adapter-matrix table --view selector --format markdown 生成",
    ),
    "sel_link": ("Link to this combination: ", "此组合的链接："),
    # the companions view (and the companion columns of the releases view)
    "install_stack": ("install the stack", "安装整个软件栈"),
    "no_stack": ("no stack: the adapter's matrix does not support this row", "无：适配器的矩阵不支持此行"),
    "install_on": ("install on {platform}", "在 {platform} 上安装"),
    "prerequisites": ("before pip", "pip 之前"),
    "prerequisite_first": ("{name} {value} first: not a pip package", "先安装 {name} {value}：不是 pip 包"),
    "no_stack_here": ("none on {platform}", "{platform} 上无"),
    "if_installed": ("if installed", "若已安装"),
    "built_from": ("built from {ref} of {url}", "由 {url} 的 {ref} 构建"),
    "stack_title": (
        "{layer} on {adapter}: the stack each release needs",
        "{layer}（基于 {adapter}）：各版本所需的软件栈",
    ),
    "companions_title": ("{dist}: companion packages per torch line", "{dist}\uff1a各 torch 版本的配套包"),
    "built": ("built for it", "为其构建"),
    "built_about": (
        "the releases built for this torch line (hover: the torch each requires)",
        "为该 torch 版本构建的发布（悬停可见各自要求的 torch）",
    ),
    "open": ("earlier releases admit it", "早期发布兼容"),
    "open_cell": ("none built for it; from earlier lines: {versions}", "无专门构建；更早版本可用：{versions}"),
    "open_about": (
        "no release was built for this line, but releases built for an earlier one require every later torch too",
        "没有为该版本构建的发布，但为更早版本构建的发布声明兼容之后所有 torch",
    ),
    "nocompanion": ("none", "无"),
    "nocompanion_about": ("no release pairs with this torch", "没有与该 torch 配套的发布"),
    "unstated": ("not stated", "未说明"),
    "unstated_about": ("compat.yaml says nothing about this torch line", "compat.yaml 未说明该 torch 版本"),
}


def word(key: str, lang: str) -> str:
    """The text of ``key`` in ``lang`` (``ValueError`` names the languages for a bad one)."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; choose from {', '.join(LANGS)}")
    return WORDS[key][LANGS.index(lang)]


def legend(rows: Iterable[Sequence[Any]], lang: str, days: int = 0) -> Tuple[Tuple[str, str, str], ...]:
    """(state, label, description) of the states that occur in ``rows``, in legend order
    (``{days}`` in a description: the evidence max age)."""
    from .table import STATES

    present = {c.state for row in rows for c in row if c.state}
    return tuple((s, word(s, lang), word(f"{s}_about", lang).format(days=days)) for s in STATES if s in present)
