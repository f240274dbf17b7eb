"""Constants shared by the pipeline tests (a module with a unique name: `conftest` is not)."""

FAKE_SECRET = "fake-client-secret-7f3a9c"
