"""Model sources: zoo names, a user's Python file, a saved `.pt2` program."""
from backend_core.stages.models.loaded import LoadedModel, ModelSpec, load_model, parse_model_source
from backend_core.stages.models.zoo import ZOO, zoo_names

__all__ = ["LoadedModel", "ModelSpec", "load_model", "parse_model_source",
           "ZOO", "zoo_names"]
