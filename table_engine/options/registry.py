"""The option registry: validation of a table's options with suggestions, and the generated documentation."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from table_engine.errors import OptionError
from table_engine.options.config_option import ConfigOption, OptionSection, PatternOption


def _markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


@dataclass
class OptionRegistry:
    """All options a table may carry: typed options by section, key patterns, and keys recognized for other engines.

    Keys in ``recognized`` (key -> who uses it) and keys starting with a ``recognized_prefixes`` entry
    (prefix -> meaning) are accepted without interpretation. Keys in ``not_implemented`` (or starting with a
    ``not_implemented_prefixes`` entry) are Paimon's but not this engine's: refused by name, never ignored.
    ``candidates`` may add pattern instantiations to the close-match suggestions for an unknown key. ``noun``
    names the options in messages ("Unknown catalog option 'x'."); a key ``is_secret`` says is a secret never has
    its value in a message.
    """

    sections: Sequence[OptionSection]
    patterns: Sequence[PatternOption] = ()
    recognized: Mapping[str, str] = field(default_factory=dict)
    recognized_prefixes: Mapping[str, str] = field(default_factory=dict)
    candidates: Callable[[str], Iterable[str]] | None = None
    noun: str = "table"
    not_implemented: frozenset[str] = frozenset()
    not_implemented_prefixes: tuple[str, ...] = ()
    is_secret: Callable[[str], bool] | None = None

    def __post_init__(self) -> None:
        self._by_key: dict[str, ConfigOption[Any]] = {}
        for section in self.sections:
            for option in section.options:
                for name in option.keys:
                    if name in self._by_key:
                        raise ValueError(f"Option key {name!r} is registered twice")
                    self._by_key[name] = option
        self._map_options = [option for option in self._by_key.values() if option.option_type.is_map]

    def options(self) -> list[ConfigOption[Any]]:
        """Every registered option, in section order."""
        return [option for section in self.sections for option in section.options]

    def find(self, name: str) -> ConfigOption[Any] | None:
        """The option registered under ``name`` (as its key or a fallback key), else None."""
        return self._by_key.get(name)

    def known_keys(self) -> list[str]:
        """Registered keys, fallback keys and recognized keys, sorted."""
        return sorted(set(self._by_key) | set(self.recognized))

    def is_known(self, name: str) -> bool:
        """Whether ``name`` is a registered, pattern, prefix-map or recognized key."""
        return not self.is_not_implemented(name) and self._check_key(name, "", {}, check_value=False) is None

    def is_not_implemented(self, name: str) -> bool:
        """Whether ``name`` is a Paimon option this engine refuses by name (``not_implemented``)."""
        return name in self.not_implemented or name.startswith(self.not_implemented_prefixes)

    def suggest(self, name: str) -> str | None:
        """The closest known key to ``name``, if any is close enough."""
        candidates = set(self.known_keys())
        if self.candidates is not None:
            candidates.update(self.candidates(name))
        matches = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.6)
        return matches[0] if matches else None

    def validate(self, raw: Mapping[str, str]) -> None:
        """Raise one OptionError listing every not implemented and unknown key (with a suggestion) and every
        unparseable value (a secret's value never shown)."""
        problems: list[str] = []
        for name in sorted(raw):
            if self.is_not_implemented(name):
                problems.append(f"{self.noun.capitalize()} option '{name}' is a Paimon {self.noun} option this "
                                "engine does not implement.")
                continue
            problem = self._check_key(name, raw[name], raw, check_value=True)
            if problem is not None:
                problems.append(problem)
        for option in self._map_options:
            found = option.find_key(raw)
            if found is not None and found not in raw:
                try:
                    option.value_from(raw)
                except OptionError as exc:
                    problems.append(str(exc))
        if len(problems) == 1:
            raise OptionError(problems[0])
        if problems:
            raise OptionError(f"{len(problems)} invalid {self.noun} options:\n  " + "\n  ".join(problems))

    def _check_key(self, name: str, value: str, raw: Mapping[str, str], *, check_value: bool) -> str | None:
        option = self._by_key.get(name)
        if option is not None:
            return self._check_value(option, name, value) if check_value else None
        for map_option in self._map_options:
            if any(name.startswith(prefix + ".") and len(name) > len(prefix) + 1 for prefix in map_option.keys):
                return None  # prefix form of a map option; the merged map is validated in validate()
        for pattern in self.patterns:
            match = pattern.regex.fullmatch(name)
            if match is None:
                continue
            if not check_value:
                return None
            problem = self._check_value(pattern.template, name, value)
            if problem is None and pattern.check is not None:
                problem = pattern.check(match, raw)
            return problem
        if name in self.recognized:
            return None
        if any(name.startswith(prefix) and len(name) > len(prefix) for prefix in self.recognized_prefixes):
            return None
        suggestion = self.suggest(name)
        hint = f" Did you mean '{suggestion}'?" if suggestion else ""
        return f"Unknown {self.noun} option '{name}'.{hint}"

    def _check_value(self, option: ConfigOption[Any], name: str, value: str) -> str | None:
        try:
            option.parse(value, key=name)
        except OptionError as exc:
            if self.is_secret is not None and self.is_secret(name):
                return f"Invalid value for {self.noun} option '{name}' (a secret: not shown)."
            return str(exc)
        return None

    # -- documentation -------------------------------------------------------------------------------------------------

    def render_markdown(
        self,
        title: str,
        preamble: str,
        annotate: Callable[[ConfigOption[Any]], str] | None = None,
    ) -> str:
        """Render every section, the key patterns and the recognized keys as Markdown tables.

        ``annotate`` may append a note (e.g. "Immutable.") to an option's description.
        """
        lines = [f"# {title}", "", preamble.strip(), "", "## Contents", ""]
        headings = [section.title for section in self.sections] + ["Key patterns", "Options of other components"]
        lines += [f"- [{heading}](#{_anchor(heading)})" for heading in headings]
        lines.append("")
        lines += self.render_sections(annotate)
        if self.patterns:
            lines += [
                "## Key patterns",
                "",
                "Keys matching these patterns are accepted; `<field>` is a column name (for `sequence-group` a",
                "comma-separated list of columns), `<type>` a file index type and `<column>` an indexed column.",
                "",
                "| Pattern | Type | Default | Description |",
                "|---|---|---|---|",
            ]
            lines += [self._option_row(p.pattern, p.template, None) for p in self.patterns]
            lines.append("")
        lines += [
            "## Options of other components",
            "",
            "These keys are accepted in table options for interoperability with other Paimon components; the table",
            "engine does not interpret them.",
            "",
        ]
        if self.recognized_prefixes:
            lines += ["| Key prefix | Meaning |", "|---|---|"]
            for prefix, meaning in self.recognized_prefixes.items():
                lines.append(f"| `{prefix}*` | {_markdown_cell(meaning)} |")
            lines.append("")
        by_origin: dict[str, list[str]] = {}
        for name, origin in self.recognized.items():
            by_origin.setdefault(origin, []).append(name)
        if by_origin:
            lines += ["| Used by | Keys |", "|---|---|"]
            for origin in sorted(by_origin):
                names = ", ".join(f"`{name}`" for name in sorted(by_origin[origin]))
                lines.append(f"| {_markdown_cell(origin)} | {names} |")
            lines.append("")
        return "\n".join(lines)

    def render_sections(self, annotate: Callable[[ConfigOption[Any]], str] | None = None) -> list[str]:
        """Markdown lines of one table per section (for a document that gathers several registries)."""
        lines: list[str] = []
        for section in self.sections:
            lines += [f"## {section.title}", ""]
            if section.description:
                lines += [section.description, ""]
            lines += ["| Key | Type | Default | Description |", "|---|---|---|---|"]
            for option in section.options:
                lines.append(self._option_row(option.key, option, annotate))
            lines.append("")
        return lines

    @staticmethod
    def _option_row(
        shown_key: str, option: ConfigOption[Any], annotate: Callable[[ConfigOption[Any]], str] | None
    ) -> str:
        description = option.description
        if option.choices:
            description += " Values: " + ", ".join(f"`{choice}`" for choice in option.choices) + "."
        if option.fallback_keys:
            description += " Fallback keys: " + ", ".join(f"`{name}`" for name in option.fallback_keys) + "."
        if annotate is not None:
            note = annotate(option)
            if note:
                description += " " + note
        default = option.default_text()
        default_cell = default if default == "(none)" else _code(default) or '`""`'
        return (
            f"| `{shown_key}` | {option.type_name} | {_markdown_cell(default_cell)} | "
            f"{_markdown_cell(description.strip())} |"
        )


def _anchor(heading: str) -> str:
    """GitHub-style anchor of a Markdown heading."""
    slug = re.sub(r"[^\w\- ]", "", heading.lower()).strip()
    return slug.replace(" ", "-")

