"""Analysis bundles: the analyses of whole libraries, computed once, shipped as one file.

``kernelcheck bundle create FILES... -o NAME.kcb`` analyses every image of the files (over
the local pool or a Dask cluster) into one SQLite file with a manifest; ``bundle info``
shows it; ``bundle import`` copies it into the user's cache; and the shim reads bundles
named in ``KERNELCHECK_BUNDLES`` (colon-separated) directly, read-only, after the cache.
See :mod:`kernelcheck.bundle.store` for the format and the trust rules.
"""

from kernelcheck.bundle.build import BundleCreated, create_bundle
from kernelcheck.bundle.images import ShippedImage, shipped_images
from kernelcheck.bundle.store import (
    BundleError,
    BundleInfo,
    BundleTrustError,
    check_bundle_file,
    import_bundle,
    read_bundle,
)

__all__ = ["BundleCreated", "BundleError", "BundleInfo", "BundleTrustError", "ShippedImage",
           "check_bundle_file", "create_bundle", "import_bundle", "read_bundle",
           "shipped_images"]
