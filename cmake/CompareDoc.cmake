# Fails, with a message saying how to fix it, when a checked-in generated doc
# differs from the one the build produced from ODS.
file(READ ${GENERATED} generated)
file(READ ${CHECKED_IN} checked_in)
if(NOT generated STREQUAL checked_in)
  message(FATAL_ERROR "${CHECKED_IN} is out of date with the ODS it is "
                      "generated from; run `ninja -C <build> update-docs`.")
endif()
message(STATUS "${CHECKED_IN} matches ${GENERATED}")
