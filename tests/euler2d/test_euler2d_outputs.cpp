// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the flagship writes (examples/euler2d): images of each --field with a
// colour bar that gives their range, frames named after --png from step 0,
// VTK image data in one file or a piece a rank, and the progress line's
// arithmetic. Most cases run the euler2d program on a tiny grid, each in a
// folder of its own, and read back what it wrote.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "bitmap_font.hpp"
#include "output_names.hpp"
#include "output_readers.hpp"
#include "png_image.hpp"
#include "progress.hpp"
#include "quantity.hpp"
#include "vtk_image.hpp"

namespace {

namespace fs = std::filesystem;
using namespace weft::euler;
using namespace weft::euler::test;

// An empty folder for one case (EULER2D_OUTPUTS/name).
fs::path fresh_folder(const std::string& name) {
  const fs::path folder = fs::path(EULER2D_OUTPUTS) / name;
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

struct Run {
  int exit_code;
  std::string output;  // stdout and stderr
};

// `prefix` euler2d `arguments`, in `folder` (arguments go through the shell).
Run run_in(const fs::path& folder, const std::string& arguments, const std::string& prefix = "") {
  const std::string command = "cd '" + folder.string() + "' && " + prefix + " '" + EULER2D_PROGRAM + "' " +
                              arguments + " > run.log 2>&1";
  const int status = std::system(command.c_str());
  Run run{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text((folder / "run.log").string())};
  fs::remove(folder / "run.log");
  return run;
}

std::set<std::string> files_in(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.insert(entry.path().filename().string());
  return names;
}

constexpr std::array<std::uint8_t, 3> kInk{255, 255, 255};

// Whether `text` is drawn at (x, y) in the legend's font: ink where a glyph
// has a pixel, background where it has none.
bool draws_text(const Png& png, std::size_t x, std::size_t y, std::string_view text) {
  for (std::size_t k = 0; k < text.size(); ++k) {
    const Glyph& g = glyph(text[k]);
    for (std::size_t row = 0; row < kGlyphHeight; ++row) {
      for (std::size_t col = 0; col < kGlyphWidth; ++col) {
        const bool ink = (g[row] & (0x10u >> col)) != 0;
        if ((png.at(x + k * kGlyphAdvance + col, y + row) == kInk) != ink) return false;
      }
    }
  }
  return true;
}

// The values of a .vti's DataArray `name`.
std::vector<double> vti_array(const XmlElement& vti, const std::string& name) {
  for (const XmlElement* a : vti.find_all("DataArray"))
    if (a->attribute("Name") == name) return vtk_binary_array(a->text);
  FAIL("no DataArray named " << name);
  return {};
}

const std::string kTiny = "--size 160x32 --steps 4 --threads 2 --quiet";

}  // namespace

// ---- names and arithmetic ---------------------------------------------------------------

TEST_CASE("Euler2d.frames_are_named_after_the_png_with_the_step") {
  CHECK(frame_name("out/run.png", 0) == "out/run_000000.png");
  CHECK(frame_name("out/run.png", 40) == "out/run_000040.png");
  CHECK(frame_name("run.v2/shot", 7) == "run.v2/shot_000007");  // no extension: the step at the end
  CHECK(frame_name("d.png", 1234567) == "d_1234567.png");
  CHECK(vtk_piece_name("out/run.vti", 3) == "out/run_rank3.vti");
  CHECK(pvti_name("out/run.vti") == "out/run.pvti");
}

TEST_CASE("Euler2d.progress_gives_the_share_of_the_run_done_and_the_time_left") {
  StepInfo info;
  info.step = 150;
  info.time = 0.05;
  CHECK(run_fraction(info, 0, 0.1) == doctest::Approx(0.5));     // by end time
  CHECK(run_fraction(info, 300, 0.0) == doctest::Approx(0.5));   // by steps
  CHECK(run_fraction(info, 200, 0.1) == doctest::Approx(0.75));  // whichever stops it first
  CHECK(format_eta(10.0, 0.5) == "10s");
  CHECK(format_eta(60.0, 0.25) == "3m00s");
  CHECK(format_eta(3600.0, 0.5) == "1h00m");
  CHECK(format_eta(1.0, 0.0) == "?");  // nothing to go on yet
}

TEST_CASE("Euler2d.schlieren_is_black_at_the_steepest_gradient_and_white_where_uniform") {
  // 8 x 3 cells, density 1 left of x = 4 and 2 from there: one jump.
  std::vector<double> rho(8 * 3);
  for (std::size_t k = 0; k < rho.size(); ++k) rho[k] = k % 8 < 4 ? 1.0 : 2.0;
  const std::vector<double> s = weft::euler::detail::schlieren(rho, 8, 3);
  CHECK(s[1 * 8 + 3] == doctest::Approx(std::exp(-kSchlierenK)));  // at the jump
  CHECK(s[1 * 8 + 0] == 1.0);                                      // far from it
  CHECK(s[1 * 8 + 7] == 1.0);
}

TEST_CASE("Euler2d.the_font_has_every_character_a_label_or_title_uses") {
  for (const char c : std::string_view("0123456789.-+e()DENSITYPRESSURESPEEDSCHLIERENLOG "))
    CHECK_MESSAGE((c == '?' || glyph(c) != glyph('?')), "no glyph for '" << c << "'");
  CHECK(glyph('e') == glyph('E'));
  CHECK(text_width("0.125") == 5 * kGlyphAdvance - 1);
}

// ---- images --------------------------------------------------------------------------------

TEST_CASE("Euler2d.each_field_writes_an_image_of_the_field_and_its_colour_bar") {
  const fs::path folder = fresh_folder("each_field");
  const LegendLayout layout = legend_layout(160, 32);
  CHECK(layout.image_width == 160);
  CHECK(layout.image_height == 51);  // 32 rows of cells, 19 of legend
  for (const char* field : {"density", "pressure", "velocity", "schlieren"}) {
    CAPTURE(field);
    const Run run = run_in(folder, kTiny + " --field " + field);
    REQUIRE_MESSAGE(run.exit_code == 0, run.output);
    CHECK(run.output.find(std::string(field) + " image: euler2d_" + field + ".png") != std::string::npos);
    const Png png = read_png((folder / ("euler2d_" + std::string(field) + ".png")).string());
    CHECK(png.width == layout.image_width);
    CHECK(png.height == layout.image_height);
  }
}

TEST_CASE("Euler2d.the_colour_bar_runs_from_the_lowest_to_the_highest_value_and_says_them") {
  // The density's range, read from the VTK file of the same run.
  const fs::path folder = fresh_folder("colour_bar");
  const Run run = run_in(folder, kTiny + " --png d.png --vtk d.vti");
  REQUIRE_MESSAGE(run.exit_code == 0, run.output);
  const std::vector<double> rho = vti_array(parse_xml(read_text((folder / "d.vti").string())), "density");
  const auto [low, high] = std::minmax_element(rho.begin(), rho.end());
  const Png png = read_png((folder / "d.png").string());
  const LegendLayout l = legend_layout(160, 32);
  const std::size_t bar = l.bar_top + l.bar_rows / 2, right = l.image_width - l.margin;
  CHECK(png.at(l.margin, bar) == colour_of(0.0, ColourMap::ramp));
  CHECK(png.at(right - 1, bar) == colour_of(1.0, ColourMap::ramp));
  CHECK(draws_text(png, l.margin, l.text_top, scale_label(*low)));
  CHECK(draws_text(png, right - text_width(scale_label(*high)), l.text_top, scale_label(*high)));
  // The cell of the lowest density has the bar's first colour (row 0 of the image is the top row).
  const auto k = static_cast<std::size_t>(low - rho.begin());
  CHECK(png.at(k % 160, 31 - k / 160) == colour_of(0.0, ColourMap::ramp));
}

TEST_CASE("Euler2d.the_schlieren_bar_is_grey_from_0_to_1") {
  const fs::path folder = fresh_folder("schlieren_bar");
  const Run run = run_in(folder, kTiny + " --field schlieren --png s.png");
  REQUIRE_MESSAGE(run.exit_code == 0, run.output);
  const Png png = read_png((folder / "s.png").string());
  const LegendLayout l = legend_layout(160, 32);
  CHECK(png.at(l.margin, l.bar_top) == colour_of(0.0, ColourMap::grey));
  CHECK(png.at(l.image_width - l.margin - 1, l.bar_top) == std::array<std::uint8_t, 3>{255, 255, 255});
  CHECK(draws_text(png, l.margin, l.text_top, "0"));
  CHECK(draws_text(png, l.image_width - l.margin - text_width("1"), l.text_top, "1"));
  CHECK(draws_text(png, (160 - text_width("SCHLIEREN")) / 2, l.text_top, "SCHLIEREN"));
}

TEST_CASE("Euler2d.a_field_without_a_range_still_draws") {
  // Sod's gas starts at rest: the speed is 0 everywhere in frame 0.
  const fs::path folder = fresh_folder("no_range");
  const Run run = run_in(folder,
                         "--problem sod --size 40x4 --partitions 1 --steps 1 --field velocity "
                         "--png-every 1 --png v.png --quiet");
  REQUIRE_MESSAGE(run.exit_code == 0, run.output);
  const Png png = read_png((folder / "v_000000.png").string());
  const LegendLayout l = legend_layout(40, 4);
  CHECK(png.width == l.image_width);  // widened for the labels
  CHECK(draws_text(png, l.margin, l.text_top, "0"));
  CHECK(draws_text(png, l.image_width - l.margin - text_width("0"), l.text_top, "0"));
}

TEST_CASE("Euler2d.frames_follow_the_png_name_and_folder_from_step_0") {
  const fs::path folder = fresh_folder("frames");
  fs::create_directory(folder / "out");
  const Run run = run_in(folder, "--size 64x16 --steps 6 --png-every 3 --png out/run.png --quiet");
  REQUIRE_MESSAGE(run.exit_code == 0, run.output);
  CHECK(files_in(folder / "out") ==
        std::set<std::string>{"run.png", "run_000000.png", "run_000003.png", "run_000006.png"});
  CHECK(files_in(folder).size() == 1);  // nothing beside out/
  CHECK(read_png((folder / "out/run_000000.png").string()).height == legend_layout(64, 16).image_height);
}

TEST_CASE("Euler2d.frames_without_a_png_name_are_a_usage_error") {
  const fs::path folder = fresh_folder("frames_unnamed");
  const Run run = run_in(folder, "--size 64x16 --steps 2 --png-every 1 --png ''");
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("--png-every: the frames are named after --png") != std::string::npos);
  CHECK(files_in(folder).empty());
}

// ---- VTK -----------------------------------------------------------------------------------

TEST_CASE("Euler2d.vtk_file_is_image_data_with_every_cell_of_each_array") {
  const fs::path folder = fresh_folder("vtk");
  const Run run = run_in(folder, "--size 24x8 --partitions 2 --steps 2 --png '' --vtk s.vti --quiet");
  REQUIRE_MESSAGE(run.exit_code == 0, run.output);
  CHECK(run.output.find("VTK: s.vti") != std::string::npos);
  const XmlElement vti = parse_xml(read_text((folder / "s.vti").string()));
  CHECK(vti.name == "VTKFile");
  CHECK(vti.attribute("type") == "ImageData");
  CHECK(vti.attribute("header_type") == "UInt64");
  REQUIRE(vti.find("ImageData") != nullptr);
  CHECK(vti.find("ImageData")->attribute("WholeExtent") == "0 24 0 8 0 0");  // points: cells + 1
  CHECK(vti.find("Piece")->attribute("Extent") == "0 24 0 8 0 0");
  std::vector<std::string> names;
  for (const XmlElement* a : vti.find("CellData")->find_all("DataArray"))
    names.push_back(a->attribute("Name"));
  CHECK(names == std::vector<std::string>{"density", "pressure", "velocity"});
  const std::vector<double> rho = vti_array(vti, "density"), velocity = vti_array(vti, "velocity");
  CHECK(rho.size() == 24 * 8);
  CHECK(vti_array(vti, "pressure").size() == 24 * 8);
  CHECK(velocity.size() == 3 * 24 * 8);
  CHECK(std::all_of(rho.begin(), rho.end(), [](double v) { return v > 0.0; }));
  for (std::size_t k = 2; k < velocity.size(); k += 3) CHECK(velocity[k] == 0.0);  // 2D: no z component
}

#ifdef EULER2D_MPIEXEC
TEST_CASE("Euler2d.vtk_over_two_ranks_is_a_piece_a_rank_placed_by_a_pvti") {
  const fs::path folder = fresh_folder("vtk_ranks");
  const std::string args = "--size 24x8 --partitions 2 --steps 2 --threads 1 --png '' --quiet --vtk ";
  const Run one = run_in(folder, args + "one.vti");
  const Run ranks = run_in(folder, args + "r.vti", EULER2D_MPIEXEC);
  REQUIRE_MESSAGE(one.exit_code == 0, one.output);
  REQUIRE_MESSAGE(ranks.exit_code == 0, ranks.output);
  CHECK(files_in(folder) == std::set<std::string>{"one.vti", "r.pvti", "r_rank0.vti", "r_rank1.vti"});
  const XmlElement pvti = parse_xml(read_text((folder / "r.pvti").string()));
  CHECK(pvti.attribute("type") == "PImageData");
  CHECK(pvti.find("PImageData")->attribute("WholeExtent") == "0 24 0 8 0 0");
  const std::vector<const XmlElement*> pieces = pvti.find_all("Piece");
  REQUIRE(pieces.size() == 2);
  // Rank r's rows, in order; together bitwise the one process's field.
  std::vector<double> joined;
  for (int r = 0; r < 2; ++r) {
    CAPTURE(r);
    const std::string extent = r == 0 ? "0 24 0 4 0 0" : "0 24 4 8 0 0";
    CHECK(pieces[r]->attribute("Extent") == extent);
    CHECK(pieces[r]->attribute("Source") == "r_rank" + std::to_string(r) + ".vti");
    const XmlElement piece = parse_xml(read_text((folder / pieces[r]->attribute("Source")).string()));
    CHECK(piece.find("Piece")->attribute("Extent") == extent);
    const std::vector<double> rho = vti_array(piece, "density");
    CHECK(rho.size() == 24 * 4);
    joined.insert(joined.end(), rho.begin(), rho.end());
  }
  CHECK(joined == vti_array(parse_xml(read_text((folder / "one.vti").string())), "density"));
}
#endif
