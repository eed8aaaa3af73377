package org.securepush.android;

import androidx.work.Data;
import androidx.work.ExistingWorkPolicy;
import androidx.work.OneTimeWorkRequest;
import androidx.work.OutOfQuotaPolicy;
import androidx.work.WorkManager;
import com.google.firebase.messaging.FirebaseMessagingService;
import com.google.firebase.messaging.RemoteMessage;
import org.securepush.client.PushMessage;
import org.securepush.client.SealedPreview;

/**
 * The FCM side of the kit: declare it (or a subclass) in the manifest with the {@code com.google.firebase.MESSAGING_EVENT}
 * intent filter. {@code onMessageReceived} has seconds only, so it shows the sealed preview (or the generic text) at
 * once and leaves the fetch to an expedited {@link FetchWorker}, one per notification id (a redelivered message
 * does not fetch twice); {@code onNewToken} hands the new token to the server with the device credential alone
 * ({@link TokenRefreshWorker}); {@code onDeletedMessages} catches up ({@link CatchUpWorker}).
 */
public class SecurePushMessagingService extends FirebaseMessagingService {
    @Override
    public void onMessageReceived(RemoteMessage message) {
        PushMessage push = PushMessage.fromFcmData(message.getData());
        if (push == null) return;
        NotificationPresenter presenter = SecurePushAndroid.presenter();
        switch (push.kind()) {
            case CLEAR:
                presenter.remove(push.clearIds());
                return;
            case SEALED:
                try {
                    SealedPreview preview = SecurePushAndroid.client(this).openSealed(push);
                    if (preview.title() != null) {
                        presenter.showPreview(push.notificationId(), preview.title(), preview.body());
                    } else {
                        presenter.showGeneric(push.notificationId());
                    }
                } catch (Exception e) {
                    presenter.showGeneric(push.notificationId());
                }
                break;
            case NOTIFICATION:
                presenter.showGeneric(push.notificationId());
                break;
        }
        enqueue(FetchWorker.class, "securepush-fetch-" + push.notificationId(), FetchWorker.ID, push.notificationId());
    }

    @Override
    public void onNewToken(String token) {
        enqueue(TokenRefreshWorker.class, "securepush-token", TokenRefreshWorker.TOKEN, token);
    }

    @Override
    public void onDeletedMessages() {
        enqueue(CatchUpWorker.class, "securepush-catch-up", null, null);
    }

    /** Expedited where the quota allows (else as ordinary work), unique by name: a second one with the same name waits. */
    private void enqueue(Class<? extends androidx.work.ListenableWorker> worker, String name, String key, String value) {
        Data.Builder input = new Data.Builder();
        if (key != null) input.putString(key, value);
        OneTimeWorkRequest request =
                new OneTimeWorkRequest.Builder(worker).setExpedited(OutOfQuotaPolicy.RUN_AS_NON_EXPEDITED_WORK_REQUEST).setInputData(input.build()).build();
        WorkManager.getInstance(getApplicationContext()).enqueueUniqueWork(name, name.equals("securepush-token") ? ExistingWorkPolicy.REPLACE : ExistingWorkPolicy.KEEP, request);
    }
}
