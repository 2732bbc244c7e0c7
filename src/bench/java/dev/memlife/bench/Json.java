package dev.memlife.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Just enough JSON for the benchmark results file: maps, lists, strings, numbers, booleans and
 * null, written and read back. Read numbers are {@code Long} without a fraction or exponent, else
 * {@code Double}; objects keep their order.
 */
final class Json {

    private final String text;
    private int at;

    private Json(String text) {
        this.text = text;
    }

    /** Parses one JSON value; throws {@link IllegalArgumentException} naming the offset of an error. */
    static Object read(String text) {
        Json json = new Json(text);
        Object value = json.value();
        json.space();
        if (json.at != text.length()) {
            throw json.error("text after the value");
        }
        return value;
    }

    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out, "");
        return out.append('\n').toString();
    }

    private static void write(Object value, StringBuilder out, String indent) {
        if (value instanceof Map) {
            Map<?, ?> map = (Map<?, ?>) value;
            out.append("{");
            String inner = indent + "  ";
            int i = 0;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                out.append(i++ == 0 ? "\n" : ",\n").append(inner);
                string(String.valueOf(e.getKey()), out);
                out.append(": ");
                write(e.getValue(), out, inner);
            }
            out.append(map.isEmpty() ? "}" : "\n" + indent + "}");
        } else if (value instanceof List) {
            List<?> list = (List<?>) value;
            out.append("[");
            String inner = indent + "  ";
            for (int i = 0; i < list.size(); i++) {
                out.append(i == 0 ? "\n" : ",\n").append(inner);
                write(list.get(i), out, inner);
            }
            out.append(list.isEmpty() ? "]" : "\n" + indent + "]");
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            out.append(Double.isFinite(d) ? String.valueOf(Math.round(d * 1000) / 1000.0) : "null");
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value == null) {
            out.append("null");
        } else {
            string(value.toString(), out);
        }
    }

    private static void string(String s, StringBuilder out) {
        out.append('"');
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }

    private Object value() {
        space();
        if (at >= text.length()) {
            throw error("end of text");
        }
        char c = text.charAt(at);
        switch (c) {
            case '{':
                return object();
            case '[':
                return array();
            case '"':
                return string();
            case 't':
                return word("true", Boolean.TRUE);
            case 'f':
                return word("false", Boolean.FALSE);
            case 'n':
                return word("null", null);
            default:
                return number();
        }
    }

    private Map<String, Object> object() {
        Map<String, Object> map = new LinkedHashMap<>();
        at++;
        space();
        if (take('}')) {
            return map;
        }
        do {
            space();
            if (at >= text.length() || text.charAt(at) != '"') {
                throw error("a key");
            }
            String key = string();
            space();
            expect(':');
            map.put(key, value());
            space();
        } while (take(','));
        expect('}');
        return map;
    }

    private List<Object> array() {
        List<Object> list = new ArrayList<>();
        at++;
        space();
        if (take(']')) {
            return list;
        }
        do {
            list.add(value());
            space();
        } while (take(','));
        expect(']');
        return list;
    }

    private String string() {
        StringBuilder out = new StringBuilder();
        at++;
        while (true) {
            if (at >= text.length()) {
                throw error("an unterminated string");
            }
            char c = text.charAt(at++);
            if (c == '"') {
                return out.toString();
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char e = text.charAt(at++);
            switch (e) {
                case 'u' -> {
                    out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                }
                case 'n' -> out.append('\n');
                case 't' -> out.append('\t');
                case 'r' -> out.append('\r');
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                default -> out.append(e); // \" \\ \/
            }
        }
    }

    private Object word(String word, Object value) {
        if (!text.startsWith(word, at)) {
            throw error("a value");
        }
        at += word.length();
        return value;
    }

    private Number number() {
        int start = at;
        while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
        String n = text.substring(start, at);
        if (n.isEmpty()) {
            throw error("a value");
        }
        try {
            return n.contains(".") || n.contains("e") || n.contains("E") ? (Number) Double.valueOf(n) : Long.valueOf(n);
        } catch (NumberFormatException e) {
            throw error("a number, not " + n);
        }
    }

    private void space() {
        while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
            at++;
        }
    }

    /** Consumes {@code c} if it is next. */
    private boolean take(char c) {
        if (at < text.length() && text.charAt(at) == c) {
            at++;
            return true;
        }
        return false;
    }

    private void expect(char c) {
        if (!take(c)) {
            throw error("'" + c + "'");
        }
    }

    private IllegalArgumentException error(String expected) {
        return new IllegalArgumentException("results JSON: expected " + expected + " at offset " + at);
    }
}
