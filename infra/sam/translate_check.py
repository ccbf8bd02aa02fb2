"""Offline SAM translation check, run by infra/sam/validate after `sam validate --lint`.

Why: cfn-lint 1.5x no longer runs the SAM translator; it lints the SAM template
directly against SAM resource schemas (after merging Globals). So some errors
pass `sam validate --lint`:
  * errors only the translator detects, e.g. an Api event whose RestApiId does
    not reference an AWS::Serverless::Api, or an unknown event Type;
  * errors in values that come from Globals, e.g. `!Ref NoSuchParam` in
    Globals.Function.Environment.
Plain `sam validate` runs the translator, but builds a boto3 IAM client for
managed-policy lookups (credential probing, iam:ListPolicies), so it is not
offline.

This script:
  1. runs the same SamTemplateValidator that `sam validate` uses, with a
     managed-policy loader that never calls AWS (policy names resolve from the
     map bundled with aws-sam-translator; unknown names are kept as-is);
  2. lints the translated (plain CloudFormation) template with cfn-lint and
     fails on errors (E rules) only. Warnings are left to `sam validate --lint`
     on the source: on translated output they are mostly artefacts (e.g. the
     offline translator substitutes parameter defaults into some properties,
     which leaves W1020 "Fn::Sub isn't needed" behind).

Usage: python translate_check.py TEMPLATE [--emit OUT.json]   (exit 0 = OK, 1 = invalid)
``--emit`` also writes the translated CloudFormation as JSON (the deploy rehearsal reads each
function's handler, layers, environment and role policies from it, not from a copy).
"""

from __future__ import annotations

import logging
import sys

from cfnlint.api import ManualArgs, lint
from samcli.commands.validate.lib.exceptions import InvalidSamDocumentException
from samcli.lib.translate.sam_template_validator import SamTemplateValidator
from samcli.yamlhelper import yaml_parse

REGION = "us-east-1"


class OfflineManagedPolicyLoader:
    """Stands in for samtranslator's ManagedPolicyLoader (which calls iam:ListPolicies)."""

    def load(self) -> dict[str, str]:
        return {}


def main(argv: list[str]) -> int:
    emit = None
    if len(argv) == 4 and argv[2] == "--emit":
        emit = argv[3]
    elif len(argv) != 2:
        print(f"usage: {argv[0]} TEMPLATE [--emit OUT.json]", file=sys.stderr)
        return 2
    path = argv[1]
    # The translator warns about feature toggles missing from its offline config; noise here.
    logging.getLogger("samtranslator.feature_toggle").setLevel(logging.ERROR)

    with open(path, encoding="utf-8") as fh:
        template = yaml_parse(fh.read())

    validator = SamTemplateValidator(template, OfflineManagedPolicyLoader(), region=REGION)
    try:
        translated = validator.get_translated_template_if_valid()  # YAML text
    except InvalidSamDocumentException as exc:
        print(f"{path}: SAM translation failed: {exc}", file=sys.stderr)
        return 1

    errors = [m for m in lint(translated, config=ManualArgs(regions=[REGION])) if m.rule.id.startswith("E")]
    if errors:
        print(f"{path}: cfn-lint errors in the translated (CloudFormation) template:", file=sys.stderr)
        for m in errors:
            where = "/".join(str(p) for p in m.path) if m.path else f"line {m.linenumber}"
            print(f"  {m.rule.id} {m.message}  [at {where}]", file=sys.stderr)
        return 1

    if emit:
        import json

        with open(emit, "w", encoding="utf-8") as out:
            json.dump(yaml_parse(translated), out, indent=1, default=str)
    print(f"{path}: SAM translation OK, translated template has no cfn-lint errors (offline)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
