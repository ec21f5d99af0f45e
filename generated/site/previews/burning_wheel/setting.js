window.rulesdslPreviews("burning_wheel/setting.html", {});
