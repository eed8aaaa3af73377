#if canImport(Security)
    import Foundation
    import Security

    /// The credential in the Keychain, shareable between an app and its Notification Service Extension
    /// through a keychain access group (`$(TeamIdentifierPrefix)group.com.example.app`).
    ///
    /// Items are `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`: readable by the extension while the
    /// phone is locked (after the first unlock since boot), never restored onto another device.
    public struct KeychainCredentialStore: CredentialStore {
        /// The item's service name.
        public var service: String
        /// The item's account name.
        public var account: String
        /// The shared access group, `nil` for the app's own.
        public var accessGroup: String?

        /// Creates a store for one Keychain item.
        public init(service: String = "SecurePush", account: String = "device", accessGroup: String? = nil) {
            self.service = service
            self.account = account
            self.accessGroup = accessGroup
        }

        /// A Keychain call that did not succeed.
        public struct KeychainError: Error, Hashable {
            /// The `OSStatus`.
            public var status: OSStatus
        }

        private var query: [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
            ]
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        public func load() throws -> DeviceCredential? {
            var search = query
            search[kSecReturnData as String] = true
            search[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(search as CFDictionary, &result)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let data = result as? Data else { throw KeychainError(status: status) }
            return try JSONDecoder().decode(DeviceCredential.self, from: data)
        }

        public func save(_ credential: DeviceCredential) throws {
            let data = try JSONEncoder().encode(credential)
            let update: [String: Any] = [
                kSecValueData as String: data,
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            ]
            var status = SecItemUpdate(query as CFDictionary, update as CFDictionary)
            if status == errSecItemNotFound {
                status = SecItemAdd(query.merging(update) { _, new in new } as CFDictionary, nil)
            }
            guard status == errSecSuccess else { throw KeychainError(status: status) }
        }

        public func delete() throws {
            let status = SecItemDelete(query as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status: status) }
        }
    }
#endif
