# Sets PGMATE_USE_PEXT for core/ when PEXT is requested or when this CPU has BMI2.
# (Packagers building for other CPUs pass -DPGMATE_PEXT=OFF for the portable magics.)
set(PGMATE_USE_PEXT OFF)
if(PGMATE_PEXT STREQUAL "ON")
  set(PGMATE_USE_PEXT ON)
elseif(PGMATE_PEXT STREQUAL "AUTO" AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  try_run(_bmi2_run _bmi2_compile
    SOURCE_FROM_CONTENT bmi2_probe.cpp
      "int main() { __builtin_cpu_init(); return __builtin_cpu_supports(\"bmi2\") ? 0 : 1; }")
  if(_bmi2_compile AND _bmi2_run EQUAL 0)
    set(PGMATE_USE_PEXT ON)
  endif()
endif()
if(PGMATE_USE_PEXT)
  message(STATUS "pgmate: slider attacks use PEXT (BMI2)")
else()
  message(STATUS "pgmate: slider attacks use magic multiplication")
endif()
