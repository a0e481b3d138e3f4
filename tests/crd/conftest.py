"""The real-kubectl fixture of the e2e tests, for the generated-CRD checks here."""

from tests.e2e.conftest import kubectl  # noqa: F401
