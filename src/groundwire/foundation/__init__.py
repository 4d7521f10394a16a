"""The floor every layer stands on: the frozen-dataclass vocabulary (`types`), the error registry (`errors`), text
normalisation shared by the scorers and the checks (`textutil`) and optional imports that name their extra
(`extras`). It imports nothing of groundwire but itself, so `scoring` and `core` can both use it."""
