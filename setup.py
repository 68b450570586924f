"""Packaging that pyproject.toml cannot say: `kernels/` (the board layer's C and CMake, which every target
build compiles) installs as the package `cortexm_lens_kernels`, so a wheel carries it and a second machine,
a CI image or a Dask worker can `pip install` the product (backend_core/common/kernel_sources.py finds it)."""
from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["app*", "backend_core*", "resources*"]) + ["cortexm_lens_kernels"],
    package_dir={"cortexm_lens_kernels": "kernels"},
    package_data={
        "cortexm_lens_kernels": ["**/*.c", "**/*.cpp", "**/*.yaml", "**/*.h", "**/*.cmake", "**/*.txt", "**/*.ld",
                                 "**/*.json", "*.md", "*.json", "*.txt"],
        "backend_core": ["stages/models/weights/*.pt",    # the zoo's trained digits_cnn (scripts/train_digits.py)
                         # cmlens history's Alembic migrations (versions/ is scripts, not a package)
                         "orchestration/history/migrations/*.mako", "orchestration/history/migrations/versions/*.py",
                         "target/export/templates/*.in"],   # the bundle's cmlens_model.cmake
        # resources/ is a package so that its data files install with the product (colours, styles, icons, boards)
        "resources": ["*.json", "styles/*.qss", "styles/*.css", "icons/*.svg", "boards/*.json", "timing/*.json",
                      "report/*.js", "report/*.css"],
    },
    include_package_data=False,
)
