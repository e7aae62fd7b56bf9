# Debian's rocm_smi CMake package references a liboam it does not ship, so find the header
# and library directly. Defines RocmSmi::RocmSmi.
find_path(RocmSmi_INCLUDE_DIR rocm_smi/rocm_smi.h)
find_library(RocmSmi_LIBRARY NAMES rocm_smi64)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(RocmSmi REQUIRED_VARS RocmSmi_LIBRARY RocmSmi_INCLUDE_DIR)
if(RocmSmi_FOUND AND NOT TARGET RocmSmi::RocmSmi)
  add_library(RocmSmi::RocmSmi UNKNOWN IMPORTED)
  set_target_properties(RocmSmi::RocmSmi PROPERTIES IMPORTED_LOCATION "${RocmSmi_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${RocmSmi_INCLUDE_DIR}")
endif()
mark_as_advanced(RocmSmi_INCLUDE_DIR RocmSmi_LIBRARY)
