# Writes a C++ source that holds every *.toml below RECIPE_DIR, so that the
# built-in recipes travel inside the binary (src/recipe/builtin_recipes.h).
# Run at build time:
#   cmake -DRECIPE_DIR=<recipes> -DOUTPUT=<file.cpp> -P embed_recipes.cmake
#
# The digest is reproducible from a folder of recipes (for example one that
# `provision --print-recipes DIR` wrote) with coreutils:
#   cd DIR && find . -name '*.toml' | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12
# that is, the first 12 hex digits of the SHA-256 of sha256sum's listing of
# the files in byte order of their paths relative to the folder.
cmake_minimum_required(VERSION 3.25)
if(NOT RECIPE_DIR OR NOT OUTPUT)
  message(FATAL_ERROR "usage: cmake -DRECIPE_DIR=DIR -DOUTPUT=FILE -P embed_recipes.cmake")
endif()

file(GLOB_RECURSE files RELATIVE "${RECIPE_DIR}" "${RECIPE_DIR}/*.toml")
# Byte order, the order in which the loader reads a folder.
list(SORT files COMPARE STRING CASE SENSITIVE)
if(NOT files)
  message(FATAL_ERROR "no *.toml recipe below ${RECIPE_DIR}")
endif()

set(arrays "")
set(entries "")
set(listing "")
set(index 0)
foreach(relative IN LISTS files)
  file(READ "${RECIPE_DIR}/${relative}" hex HEX)
  file(SHA256 "${RECIPE_DIR}/${relative}" file_digest)
  string(APPEND listing "${file_digest}  ${relative}\n")
  string(LENGTH "${hex}" hex_length)
  math(EXPR size "${hex_length} / 2")
  # 0xNN, bytes, 24 to a line.
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){24})" "\\1\n    " bytes "${bytes}")
  string(APPEND arrays "// ${relative}\nconstexpr unsigned char kRecipe${index}[] = {\n    ${bytes}0x00};\n\n")
  string(APPEND entries "        {\"${relative}\", std::string_view(reinterpret_cast<const char*>(kRecipe${index}), ${size})},\n")
  math(EXPR index "${index} + 1")
endforeach()
string(SHA256 digest "${listing}")
string(SUBSTRING "${digest}" 0 12 digest)

set(source "// Generated at build time by cmake/embed_recipes.cmake from recipes/: do not edit.
#include \"recipe/builtin_recipes.h\"

namespace provision {
namespace {

${arrays}}  // namespace

const std::vector<EmbeddedRecipe>& embedded_recipes() {
    static const std::vector<EmbeddedRecipe> recipes{
${entries}    };
    return recipes;
}

std::string_view embedded_recipes_digest() { return \"${digest}\"; }

}  // namespace provision
")

# Only a changed text touches the file, so an unchanged recipe set rebuilds nothing.
set(current "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" current)
endif()
if(NOT current STREQUAL source)
  file(WRITE "${OUTPUT}" "${source}")
endif()
