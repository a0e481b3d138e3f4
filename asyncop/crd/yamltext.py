"""crd_yaml: the canonical YAML text of a CRD (or any manifest dict).

Generated CRD files are compared byte for byte, so the text depends only on the dict:
block style throughout, keys in the dict's order, lists indented under their key, no
anchors or aliases, and no line wrapping (a description stays on one line, so a changed
word changes one line of a diff); text with line breaks is a literal block (`|`). Strings
that YAML 1.1 readers such as kubectl would take for booleans (`y`, `n`, `on`, ...) or
numbers are quoted. An optional header becomes `# ...` comment lines.

Invariant: `yaml.safe_load(crd_yaml(d)) == d` for every JSON-like dict `d`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

_WIDTH = 1 << 20
_YAML11_BOOL = re.compile(r"^(y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|"
                          r"on|On|ON|off|Off|OFF)$")


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        style: str | None = "|"
    elif _YAML11_BOOL.match(value):
        style = "'"
    else:
        style = None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> Any:
        return super().increase_indent(flow, False)

    def ignore_aliases(self, data: Any) -> bool:
        return True


_Dumper.add_representer(str, _str)


def crd_yaml(crd: Mapping[str, Any], *, header: str | None = None) -> str:
    """The canonical YAML text of `crd`, with an optional `# header` comment."""
    text = yaml.dump(dict(crd), Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     width=_WIDTH, allow_unicode=True)
    if not header:
        return text
    lines = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    return lines + text
