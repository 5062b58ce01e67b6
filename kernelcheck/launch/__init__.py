"""LaunchCheck: the per-kernel launch-time idempotency predicate, its formats and evaluator."""
