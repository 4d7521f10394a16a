"""The recipe that trains, exports and calibrates groundwire's bundled verifier (needs the `train` extra)."""
