import SecurePushPostgres

/// Every function row type of the store (`FunctionRowTests` checks them all).
public enum FunctionRows {
    public static let all: [any FunctionRow.Type] = [
        ClaimDeliveriesRow.self, DeviceFetchRequestsRow.self, DeviceListPageRow.self, DeviceCheckRow.self, RegisterDeviceRow.self,
        RotateDeviceSecretRow.self, UpdateDeviceTokenRow.self, FetchStatsRow.self, UserCategoriesRow.self, EventsAfterRow.self,
    ]
}
