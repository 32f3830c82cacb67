// LoadYamlDocument: yaml-cpp's parse plus what it lets through (yaml_document.h).
#include "sloserve/core/yaml_document.h"

#include <gtest/gtest.h>

namespace sloserve {
namespace {

std::string ErrorOf(const std::string& text) {
  const StatusOr<YAML::Node> doc = LoadYamlDocument(text, "f.yaml");
  return doc.ok() ? "ok" : std::string(doc.status().message());
}

TEST(YamlDocumentTest, ValidDocumentsLoad) {
  EXPECT_EQ(ErrorOf("a: 1\nb: {c: \"x\\\"y\", d: 'it''s'}\nl: [1, 'two']\n"), "ok");
  const StatusOr<YAML::Node> doc = LoadYamlDocument("a: 'it''s'\n", "f.yaml");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ((*doc)["a"].Scalar(), "it's");
  EXPECT_EQ(ErrorOf(""), "ok");
}

TEST(YamlDocumentTest, AQuoteLeftOpenIsRefusedWhereItOpens) {
  EXPECT_EQ(ErrorOf("name: \"open\nsuite: x\nworkers: 4\n"),
            "f.yaml:1:7: a quoted string is not closed (no \" before the end of the file)");
  EXPECT_EQ(ErrorOf("a: 1\nb: 'open it''s\n"),
            "f.yaml:2:4: a quoted string is not closed (no ' before the end of the file)");
  EXPECT_EQ(ErrorOf("a: \"ends in an escaped quote\\\"\n"),
            "f.yaml:1:4: a quoted string is not closed (no \" before the end of the file)");
}

TEST(YamlDocumentTest, AKeyTwiceInOneMappingIsRefusedNamingBoth) {
  EXPECT_EQ(ErrorOf("workers: 4\nslo_ms: 1\nworkers: 8\n"),
            "f.yaml:3:1: key 'workers' given twice (first at line 1)");
  EXPECT_EQ(ErrorOf("w:\n  a: 1\n  a: 2\n"), "f.yaml:3:3: key 'a' given twice (first at line 2)");
  EXPECT_EQ(ErrorOf("l:\n  - {a: 1, a: 2}\n"),
            "f.yaml:2:12: key 'a' given twice (first at line 2)");
  // The same key in two mappings is no repetition.
  EXPECT_EQ(ErrorOf("x: {a: 1}\ny: {a: 2}\n"), "ok");
}

// A config followed by `---` and more was read as its first document alone.
TEST(YamlDocumentTest, ASecondDocumentIsRefused) {
  EXPECT_EQ(ErrorOf("workers: 4\n---\nworkers: 8\n"),
            "f.yaml:3:1: a second YAML document (after '---' on line 2): a config is one "
            "document");
  EXPECT_EQ(ErrorOf("a: 1\n--- {b: 2}\n"),
            "f.yaml:2:1: a second YAML document (after '---' on line 2): a config is one "
            "document");
  EXPECT_EQ(ErrorOf("# c\n--- {a: 1}\n# end\n"), "ok");  // a first document on its marker
  EXPECT_EQ(ErrorOf("a: |\n  ---\n  text\n"), "ok");     // indented: block scalar content
  EXPECT_EQ(ErrorOf("---\nworkers: 4\n"), "ok");         // a leading marker
  EXPECT_EQ(ErrorOf("workers: 4\n---\n"), "ok");         // a trailing one, nothing after it
  EXPECT_EQ(ErrorOf("workers: 4\n...\n"), "ok");         // an end marker
}

TEST(YamlDocumentTest, SyntaxErrorsNameTheirPlace) {
  EXPECT_EQ(ErrorOf("a: b: c\n").rfind("f.yaml:1:", 0), 0u) << ErrorOf("a: b: c\n");
}

}  // namespace
}  // namespace sloserve
