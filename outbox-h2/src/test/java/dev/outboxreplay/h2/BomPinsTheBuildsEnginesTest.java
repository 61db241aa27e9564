package dev.outboxreplay.h2;

import static org.assertj.core.api.Assertions.assertThat;

import dev.outboxreplay.h2.internal.H2Version;
import java.nio.file.Path;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The BOM an application imports pins the engines this build compiles and tests against, and
 * the version the library checks at open is that same H2: a BOM left behind by a version bump
 * would send applications an H2 the library then refuses.
 */
class BomPinsTheBuildsEnginesTest {
  @Test
  void theBomsEngineVersionsAreTheBuildsAndTheOneCheckedAtOpen() throws Exception {
    Document parent = parse(Path.of("..", "pom.xml"));
    Document bom = parse(Path.of("..", "outbox-bom", "pom.xml"));
    for (String property : new String[] {"h2.version", "sqlite.version"}) {
      assertThat(property(bom, property)).as("outbox-bom's " + property)
          .isNotBlank().isEqualTo(property(parent, property));
    }
    assertThat(managed(bom, "com.h2database", "h2")).isEqualTo("${h2.version}");
    assertThat(managed(bom, "org.xerial", "sqlite-jdbc")).isEqualTo("${sqlite.version}");
    assertThat(H2Version.BUILT_WITH).isEqualTo(property(bom, "h2.version"));
  }

  private static Document parse(Path pom) throws Exception {
    return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
  }

  private static String property(Document pom, String name) {
    NodeList properties = pom.getDocumentElement().getElementsByTagName("properties");
    for (int i = 0; i < properties.getLength(); i++) {
      NodeList values = ((Element) properties.item(i)).getElementsByTagName(name);
      if (values.getLength() > 0) {
        return values.item(0).getTextContent().trim();
      }
    }
    return null;
  }

  private static String managed(Document pom, String groupId, String artifactId) {
    NodeList dependencies = pom.getDocumentElement().getElementsByTagName("dependency");
    for (int i = 0; i < dependencies.getLength(); i++) {
      Element d = (Element) dependencies.item(i);
      if (text(d, "groupId").equals(groupId) && text(d, "artifactId").equals(artifactId)) {
        return text(d, "version");
      }
    }
    return null;
  }

  private static String text(Element parent, String tag) {
    NodeList nodes = parent.getElementsByTagName(tag);
    return nodes.getLength() == 0 ? "" : nodes.item(0).getTextContent().trim();
  }
}
