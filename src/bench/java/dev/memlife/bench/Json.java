package dev.memlife.bench;

import java.util.List;
import java.util.Map;

/** Just enough JSON writing for the benchmark results file (maps, lists, strings, numbers, booleans). */
final class Json {

    private Json() {}

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
}
