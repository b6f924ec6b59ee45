/// HTTP header fields with case-insensitive names, keeping the spelling last set.
struct HeaderFields: Sendable {
    private var fields: [String: (name: String, value: String)] = [:]

    init(_ headers: [String: String]) {
        merge(headers)
    }

    subscript(name: String) -> String? {
        get { fields[name.lowercased()]?.value }
        set { fields[name.lowercased()] = newValue.map { (name, $0) } }
    }

    /// The value of a header named in lower case, without lowercasing the name again.
    subscript(lowercased name: String) -> String? {
        fields[name]?.value
    }

    mutating func merge(_ headers: [String: String]) {
        for (name, value) in headers { self[name] = value }
    }

    var dictionary: [String: String] {
        Dictionary(uniqueKeysWithValues: fields.values.map { ($0.name, $0.value) })
    }
}
