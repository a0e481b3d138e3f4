"""The asyncop runtime: clock-driven work queue, informers, controllers and the Manager."""
