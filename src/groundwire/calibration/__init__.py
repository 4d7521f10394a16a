"""Fitting a scorer's calibration on labelled answers: claim rows, the sign-constrained combiner, the routing
thresholds, and the domain profiles of `groundwire adapt` with the eval loop's refit. Below both the service and
`train/` (which builds the bundled model with it), and plain numpy, so a core install fits profiles."""
