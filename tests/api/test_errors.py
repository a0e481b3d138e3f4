from asyncop.api import AlreadyExists, Conflict, Invalid, NotFound, ServerError, error_from_status
from asyncop.api.status import StatusCause, status_body


def test_status_body_maps_reason_and_causes() -> None:
    cause: StatusCause = {"field": "spec.replicas", "reason": "FieldValueInvalid"}
    body = status_body(422, "bad", causes=[cause])
    err = error_from_status(422, body)
    assert isinstance(err, Invalid)
    assert err.causes[0]["field"] == "spec.replicas"
    assert err.reason == "Invalid"


def test_already_exists_is_a_conflict_subclass() -> None:
    err = error_from_status(409, status_body(409, "x", reason="AlreadyExists"))
    assert isinstance(err, AlreadyExists) and isinstance(err, Conflict)
    plain = error_from_status(409, status_body(409, "stale"))
    assert type(plain) is Conflict


def test_missing_body_is_synthesized() -> None:
    err = error_from_status(404, None)
    assert isinstance(err, NotFound) and err.status["kind"] == "Status"
    assert isinstance(error_from_status(503, {"not": "status"}), ServerError)
