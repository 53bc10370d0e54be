# SPDX-License-Identifier: Apache-2.0
# cmake -DDOC=docs/api.md -DROOT=<source dir> -P check_doc_examples.cmake
# Every "<!-- example: PATH -->" marker in DOC is followed by a ```c block that
# must equal the file PATH (relative to ROOT): the documented programs are the
# ones the tests compile and run.
file(READ ${DOC} doc)
string(REGEX MATCHALL "<!-- example: [^ ]+ -->" markers "${doc}")
if(NOT markers)
  message(FATAL_ERROR "${DOC}: no example markers")
endif()
foreach(marker ${markers})
  string(REGEX REPLACE "<!-- example: ([^ ]+) -->" "\\1" path "${marker}")
  string(FIND "${doc}" "${marker}" at)
  string(SUBSTRING "${doc}" ${at} -1 rest)
  string(FIND "${rest}" "```c\n" open)
  math(EXPR start "${open} + 5")
  string(SUBSTRING "${rest}" ${start} -1 rest)
  string(FIND "${rest}" "```\n" close)
  string(SUBSTRING "${rest}" 0 ${close} listed)
  file(READ ${ROOT}/${path} actual)
  if(NOT listed STREQUAL actual)
    message(FATAL_ERROR "${DOC}: the listing of ${path} differs from the file")
  endif()
  message(STATUS "${path}: listing matches")
endforeach()
